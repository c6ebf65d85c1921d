-- Verify scirag:functions/scope_exclusions
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_excluded_documents()'::regprocedure),
         'scirag.scope_excluded_documents(): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_excluded_documents()', 'EXECUTE'), 'scirag.scope_excluded_documents(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_excluded_documents()', 'EXECUTE'), 'scirag.scope_excluded_documents(): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_excluded_documents()', 'EXECUTE'), 'scirag.scope_excluded_documents(): scirag_owner lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_exclude_retracted()'::regprocedure),
         'scirag.scope_exclude_retracted(): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_exclude_retracted()', 'EXECUTE'), 'scirag.scope_exclude_retracted(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_exclude_retracted()', 'EXECUTE'), 'scirag.scope_exclude_retracted(): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_exclude_retracted()', 'EXECUTE'), 'scirag.scope_exclude_retracted(): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_exclude_retracted()', 'EXECUTE'), 'scirag.scope_exclude_retracted(): scirag_owner lacks EXECUTE';
END $$;
