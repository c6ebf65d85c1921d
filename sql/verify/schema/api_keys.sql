-- Verify scirag:schema/api_keys on pg
DO $$
BEGIN
  ASSERT (SELECT relowner = 'scirag_owner'::regrole FROM pg_class WHERE oid = 'scirag.api_keys'::regclass),
    'scirag.api_keys is not owned by scirag_owner';
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.api_keys', 'SELECT'),
    'scirag_reader can read scirag.api_keys';
  ASSERT NOT has_table_privilege('scirag_loader', 'scirag.api_keys', 'SELECT'),
    'scirag_loader can read scirag.api_keys';
  ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'scirag.api_keys'::regclass),
    'scirag.api_keys must have row-level security enabled and forced';
  ASSERT (SELECT array_agg(polname::text) = '{owner_all}' FROM pg_policy WHERE polrelid = 'scirag.api_keys'::regclass),
    'scirag.api_keys must have exactly the owner_all policy';
  ASSERT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'scirag.api_keys'::regclass
                 AND tgname = 'api_keys_check_role'), 'api_keys_check_role trigger missing';
END $$;
