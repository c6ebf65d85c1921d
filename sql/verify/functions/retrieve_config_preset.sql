-- Verify scirag:functions/retrieve_config_preset
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_config(text, int, jsonb)'::regprocedure),
         'scirag.retrieve_config(text, int, jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_config(text, int, jsonb)', 'EXECUTE'), 'scirag.retrieve_config(text, int, jsonb): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_config(text, int, jsonb)', 'EXECUTE'), 'scirag.retrieve_config(text, int, jsonb): scirag_loader lacks EXECUTE';
  -- in its own body, or (since functions/retrieve_config_resolved) in the four-argument
  -- retrieve_config it runs: every sqitch verify of a later database must still pass
  ASSERT (SELECT bool_or(prosrc ~ 'preset_resolve') AND NOT bool_or(prosrc ~ 'preset_get') FROM pg_proc
          WHERE pronamespace = 'scirag'::regnamespace AND proname = 'retrieve_config'),
         'scirag.retrieve_config(text, int, jsonb): the preset comes from scirag.preset_resolve';
END $$;
