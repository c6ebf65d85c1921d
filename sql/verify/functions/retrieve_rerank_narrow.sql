-- Verify scirag:functions/retrieve_rerank_narrow
DO $$
BEGIN
  ASSERT (SELECT prosrc ~ 'narrow_only' AND prosrc ~ 'scope_narrow_documents\(\)' AND pg_get_userbyid(proowner) = 'scirag_api'
                 AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb)'::regprocedure),
         'scirag.retrieve_rerank: honours narrow_only; owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb)', 'EXECUTE'), 'scirag.retrieve_rerank: scirag_reader lacks EXECUTE';
END $$;
