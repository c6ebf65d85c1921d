-- Verify scirag:functions/scope_ceiling
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_ceiling()'::regprocedure),
         'scirag.scope_ceiling(): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_ceiling()', 'EXECUTE'), 'scirag.scope_ceiling(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_ceiling()', 'EXECUTE'), 'scirag.scope_ceiling(): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_ceiling()', 'EXECUTE'), 'scirag.scope_ceiling(): scirag_owner lacks EXECUTE';
END $$;
