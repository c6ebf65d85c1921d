-- Verify scirag:functions/rerank_main
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure),
         'scirag.rerank(text, bigint[], text[], jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT ARRAY(SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END::text
                       FROM aclexplode(proacl) a WHERE a.privilege_type = 'EXECUTE' ORDER BY 1)
          FROM pg_proc WHERE oid = 'scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure) = ARRAY['scirag_api', 'scirag_loader', 'scirag_reader']::text[],
         'scirag.rerank(text, bigint[], text[], jsonb): EXECUTE not held by exactly scirag_api, scirag_loader, scirag_reader';
END $$;
