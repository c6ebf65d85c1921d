-- Verify scirag:policies/retrieval_profiles
DO $$
BEGIN
  ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'scirag.retrieval_profiles'::regclass),
         'retrieval_profiles: row-level security not forced';
  ASSERT (SELECT array_agg(polname::text) FROM pg_policy WHERE polrelid = 'scirag.retrieval_profiles'::regclass)
         = ARRAY['read_all'], 'retrieval_profiles: policies are not exactly read_all';
  ASSERT has_table_privilege('scirag_reader', 'scirag.retrieval_profiles', 'SELECT')
         AND NOT has_table_privilege('scirag_reader', 'scirag.retrieval_profiles', 'UPDATE'),
         'retrieval_profiles: readers must read and not write';
END $$;
