-- Verify scirag:schema/api_role
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'scirag_api'
                 AND NOT rolcanlogin AND NOT rolsuper AND NOT rolbypassrls),
         'role scirag_api missing, able to log in, superuser or bypassing row-level security';
  ASSERT has_schema_privilege('scirag_api', 'scirag', 'USAGE'), 'scirag_api has no USAGE on schema scirag';
END $$;
