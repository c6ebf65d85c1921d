-- Verify scirag:functions/search_community_main
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.search_community(public.vector, integer)'::regprocedure),
         'scirag.search_community(public.vector, integer): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT ARRAY(SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END::text
                       FROM aclexplode(proacl) a WHERE a.privilege_type = 'EXECUTE' ORDER BY 1)
          FROM pg_proc WHERE oid = 'scirag.search_community(public.vector, integer)'::regprocedure) = ARRAY['scirag_api', 'scirag_loader', 'scirag_reader']::text[],
         'scirag.search_community(public.vector, integer): EXECUTE not held by exactly scirag_api, scirag_loader, scirag_reader';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.search_community_chunks(public.vector, integer)'::regprocedure),
         'scirag.search_community_chunks(public.vector, integer): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT ARRAY(SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END::text
                       FROM aclexplode(proacl) a WHERE a.privilege_type = 'EXECUTE' ORDER BY 1)
          FROM pg_proc WHERE oid = 'scirag.search_community_chunks(public.vector, integer)'::regprocedure) = ARRAY['scirag_api', 'scirag_loader', 'scirag_reader']::text[],
         'scirag.search_community_chunks(public.vector, integer): EXECUTE not held by exactly scirag_api, scirag_loader, scirag_reader';
END $$;
