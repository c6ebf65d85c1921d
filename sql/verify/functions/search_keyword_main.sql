-- Verify scirag:functions/search_keyword_main
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.search_keyword(text, int, double precision)'::regprocedure),
         'scirag.search_keyword(text, int, double precision): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.search_keyword(text, int, double precision)', 'EXECUTE'), 'scirag.search_keyword(text, int, double precision): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.search_keyword(text, int, double precision)', 'EXECUTE'), 'scirag.search_keyword(text, int, double precision): scirag_loader lacks EXECUTE';
END $$;
