-- Verify scirag:functions/retrieve_rows
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_rows(scirag.ranked_hit[], int)'::regprocedure),
         'scirag.retrieve_rows(scirag.ranked_hit[], int): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_rows(scirag.ranked_hit[], int)', 'EXECUTE'), 'scirag.retrieve_rows(scirag.ranked_hit[], int): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_rows(scirag.ranked_hit[], int)', 'EXECUTE'), 'scirag.retrieve_rows(scirag.ranked_hit[], int): scirag_loader lacks EXECUTE';
END $$;
