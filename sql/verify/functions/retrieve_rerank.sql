-- Verify scirag:functions/retrieve_rerank
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb)'::regprocedure),
         'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb)', 'EXECUTE'), 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb)', 'EXECUTE'), 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb): scirag_loader lacks EXECUTE';
END $$;
