-- Verify scirag:functions/retrieve_option_schema
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_option_schema()'::regprocedure),
         'scirag.retrieve_option_schema(): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_option_schema()', 'EXECUTE'), 'scirag.retrieve_option_schema(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.retrieve_option_schema()', 'EXECUTE'), 'scirag.retrieve_option_schema(): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_option_schema()', 'EXECUTE'), 'scirag.retrieve_option_schema(): scirag_loader lacks EXECUTE';
END $$;
