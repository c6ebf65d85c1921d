-- Verify scirag:functions/consolidate_main
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.consolidate(bigint[], jsonb)'::regprocedure),
         'scirag.consolidate(bigint[], jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.consolidate(bigint[], jsonb)', 'EXECUTE'), 'scirag.consolidate(bigint[], jsonb): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.consolidate(bigint[], jsonb)', 'EXECUTE'), 'scirag.consolidate(bigint[], jsonb): scirag_loader lacks EXECUTE';
END $$;
