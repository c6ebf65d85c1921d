-- Verify scirag:functions/window_text
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.window_text(text, int, int, int, text[])'::regprocedure),
         'scirag.window_text(text, int, int, int, text[]): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.window_text(text, int, int, int, text[])', 'EXECUTE'), 'scirag.window_text(text, int, int, int, text[]): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.window_text(text, int, int, int, text[])', 'EXECUTE'), 'scirag.window_text(text, int, int, int, text[]): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.window_text(text, int, int, int, text[])', 'EXECUTE'), 'scirag.window_text(text, int, int, int, text[]): scirag_loader lacks EXECUTE';
END $$;
