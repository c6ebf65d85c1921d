-- Verify scirag:functions/consolidation_config_preset
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.consolidation_config(jsonb)'::regprocedure),
         'scirag.consolidation_config(jsonb): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.consolidation_config(jsonb)', 'EXECUTE'), 'scirag.consolidation_config(jsonb): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.consolidation_config(jsonb)', 'EXECUTE'), 'scirag.consolidation_config(jsonb): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.consolidation_config(jsonb)', 'EXECUTE'), 'scirag.consolidation_config(jsonb): scirag_loader lacks EXECUTE';
  ASSERT (SELECT prosrc ~ 'preset_resolve' AND prosrc !~ 'preset_get' FROM pg_proc
          WHERE oid = 'scirag.consolidation_config(jsonb)'::regprocedure),
         'scirag.consolidation_config(jsonb): the preset comes from scirag.preset_resolve';
END $$;
