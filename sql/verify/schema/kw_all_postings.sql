-- Verify scirag:schema/kw_all_postings
DO $$
BEGIN
  ASSERT to_regclass('scirag.kw_all_postings') IS NOT NULL, 'kw_all_postings missing';
  PERFORM * FROM scirag.kw_all_postings LIMIT 1;
END $$;
