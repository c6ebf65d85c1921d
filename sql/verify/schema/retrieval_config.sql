-- Verify scirag:schema/retrieval_config
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM scirag.retrieval_profiles WHERE name IN ('interactive', 'deep')) = 2,
         'retrieval profiles missing';
END $$;
