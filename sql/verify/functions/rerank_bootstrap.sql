-- Verify scirag:functions/rerank_bootstrap
DO $$
BEGIN
  ASSERT (SELECT prosrc ~ 'GD.get\(''scirag_path_ready''\)' AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
                 AND prosecdef AND pg_get_userbyid(proowner) = 'scirag_api'
          FROM pg_proc WHERE oid = 'scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure),
         'scirag.rerank(text, bigint[], text[], jsonb): bootstraps only when the backend has not yet, owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_loader', 'scirag.rerank(text, bigint[], text[], jsonb)', 'EXECUTE'), 'scirag.rerank(text, bigint[], text[], jsonb): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_reader', 'scirag.rerank(text, bigint[], text[], jsonb)', 'EXECUTE'), 'scirag.rerank(text, bigint[], text[], jsonb): scirag_reader lacks EXECUTE';
END $$;
