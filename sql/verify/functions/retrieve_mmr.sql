-- Verify scirag:functions/retrieve_mmr
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision)'::regprocedure),
         'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision)', 'EXECUTE'), 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision)', 'EXECUTE'), 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision)', 'EXECUTE'), 'scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision): scirag_loader lacks EXECUTE';
END $$;
