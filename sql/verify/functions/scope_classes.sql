-- Verify scirag:functions/scope_classes
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_licenses()'::regprocedure),
         'scirag.scope_licenses(): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_licenses()', 'EXECUTE'), 'scirag.scope_licenses(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_licenses()', 'EXECUTE'), 'scirag.scope_licenses(): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_licenses()', 'EXECUTE'), 'scirag.scope_licenses(): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_licenses()', 'EXECUTE'), 'scirag.scope_licenses(): scirag_owner lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_sources()'::regprocedure),
         'scirag.scope_sources(): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_sources()', 'EXECUTE'), 'scirag.scope_sources(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_sources()', 'EXECUTE'), 'scirag.scope_sources(): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_sources()', 'EXECUTE'), 'scirag.scope_sources(): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_sources()', 'EXECUTE'), 'scirag.scope_sources(): scirag_owner lacks EXECUTE';
END $$;
