-- Verify scirag:functions/retrieve_config_resolved
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_config(text, int, jsonb, jsonb)'::regprocedure),
         'scirag.retrieve_config(text, int, jsonb, jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_config(text, int, jsonb)'::regprocedure),
         'scirag.retrieve_config(text, int, jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_config(text, int, jsonb)', 'EXECUTE'),
         'scirag.retrieve_config(text, int, jsonb): scirag_reader lacks EXECUTE';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.retrieve_config(text, int, jsonb, jsonb)', 'EXECUTE'),
         'scirag.retrieve_config(text, int, jsonb, jsonb): readers may hand in a resolved preset';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_config(text, int, jsonb, jsonb)', 'EXECUTE'),
         'scirag.retrieve_config(text, int, jsonb, jsonb): scirag_loader lacks EXECUTE';
  ASSERT scirag.retrieve_config('interactive', 10, '{"preset": "high-recall"}')
         = scirag.retrieve_config('interactive', 10, '{"preset": "high-recall"}', scirag.preset_resolve('high-recall')),
         'scirag.retrieve_config: the configuration differs when the preset is handed in resolved';
END $$;
