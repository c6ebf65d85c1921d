-- Verify scirag:functions/retrieve_fuse
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb)'::regprocedure),
         'scirag.retrieve_fuse(scirag.layer_hit[], jsonb): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb)', 'EXECUTE'), 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb)', 'EXECUTE'), 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb)', 'EXECUTE'), 'scirag.retrieve_fuse(scirag.layer_hit[], jsonb): scirag_loader lacks EXECUTE';
END $$;
