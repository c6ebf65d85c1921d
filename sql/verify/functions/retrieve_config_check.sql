-- Verify scirag:functions/retrieve_config_check
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_config_check(jsonb)'::regprocedure),
         'scirag.retrieve_config_check(jsonb): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_config_check(jsonb)', 'EXECUTE'), 'scirag.retrieve_config_check(jsonb): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.retrieve_config_check(jsonb)', 'EXECUTE'), 'scirag.retrieve_config_check(jsonb): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_config_check(jsonb)', 'EXECUTE'), 'scirag.retrieve_config_check(jsonb): scirag_loader lacks EXECUTE';
END $$;
