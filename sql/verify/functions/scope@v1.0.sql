-- Verify scirag:functions/scope
DO $$
BEGIN
  ASSERT scirag.parse_list(' a, b ,,a') = ARRAY['a', 'b'], 'parse_list';
  ASSERT to_regprocedure('scirag.scope_licenses()') IS NOT NULL, 'scope_licenses missing';
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.scope_excluded_documents()'::regprocedure),
         'scope_excluded_documents must run as the caller';
  ASSERT to_regclass('scirag.document_keys') IS NOT NULL, 'document_keys missing';
END $$;
