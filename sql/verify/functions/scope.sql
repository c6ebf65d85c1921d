-- Verify scirag:functions/scope
DO $$
BEGIN
  ASSERT scirag.parse_list(' a, b ,,a') = ARRAY['a', 'b'], 'parse_list';
  ASSERT to_regprocedure('scirag.scope_licenses()') IS NOT NULL, 'scope_licenses missing';
  ASSERT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.scope_excluded_documents()'::regprocedure),
         'scope_excluded_documents must be SECURITY DEFINER';
  ASSERT (SELECT rolbypassrls AND NOT rolcanlogin FROM pg_roles WHERE rolname = 'scirag_scope_resolver'),
         'scope resolver role wrong';
END $$;
