-- Verify scirag:schema/keyword_index
DO $$
BEGIN
  ASSERT to_regclass('scirag.kw_postings') IS NOT NULL, 'kw_postings missing';
  ASSERT to_regclass('scirag.kw_term_stats') IS NOT NULL, 'kw_term_stats missing';
  ASSERT to_regclass('scirag.kw_class_stats') IS NOT NULL, 'kw_class_stats missing';
END $$;
