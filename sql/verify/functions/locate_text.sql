-- Verify scirag:functions/locate_text
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.locate_text(text, text, int)'::regprocedure),
         'scirag.locate_text(text, text, int): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.locate_text(text, text, int)', 'EXECUTE'), 'scirag.locate_text(text, text, int): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.locate_text(text, text, int)', 'EXECUTE'), 'scirag.locate_text(text, text, int): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.locate_text(text, text, int)', 'EXECUTE'), 'scirag.locate_text(text, text, int): scirag_loader lacks EXECUTE';
END $$;
