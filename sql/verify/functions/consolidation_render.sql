-- Verify scirag:functions/consolidation_render
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.consolidation_render(scirag.consolidation_group, boolean)'::regprocedure),
         'scirag.consolidation_render(scirag.consolidation_group, boolean): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.consolidation_render(scirag.consolidation_group, boolean)', 'EXECUTE'), 'scirag.consolidation_render(scirag.consolidation_group, boolean): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.consolidation_render(scirag.consolidation_group, boolean)', 'EXECUTE'), 'scirag.consolidation_render(scirag.consolidation_group, boolean): scirag_loader lacks EXECUTE';
END $$;
