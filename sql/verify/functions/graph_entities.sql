-- Verify scirag:functions/graph_entities
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.graph_question_entities(text)'::regprocedure),
         'scirag.graph_question_entities(text): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT ARRAY(SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END::text
                       FROM aclexplode(proacl) a WHERE a.privilege_type = 'EXECUTE' ORDER BY 1)
          FROM pg_proc WHERE oid = 'scirag.graph_question_entities(text)'::regprocedure) = ARRAY['scirag_api', 'scirag_loader', 'scirag_reader']::text[],
         'scirag.graph_question_entities(text): EXECUTE not held by exactly scirag_api, scirag_loader, scirag_reader';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.graph_seed_entities(text, text[])'::regprocedure),
         'scirag.graph_seed_entities(text, text[]): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT ARRAY(SELECT DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END::text
                       FROM aclexplode(proacl) a WHERE a.privilege_type = 'EXECUTE' ORDER BY 1)
          FROM pg_proc WHERE oid = 'scirag.graph_seed_entities(text, text[])'::regprocedure) = ARRAY['scirag_api', 'scirag_loader', 'scirag_reader']::text[],
         'scirag.graph_seed_entities(text, text[]): EXECUTE not held by exactly scirag_api, scirag_loader, scirag_reader';
END $$;
