-- Verify scirag:functions/breadcrumb
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.breadcrumb(text, text)'::regprocedure),
         'scirag.breadcrumb(text, text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.breadcrumb(text, text)', 'EXECUTE'), 'scirag.breadcrumb(text, text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.breadcrumb(text, text)', 'EXECUTE'), 'scirag.breadcrumb(text, text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.breadcrumb(text, text)', 'EXECUTE'), 'scirag.breadcrumb(text, text): scirag_loader lacks EXECUTE';
END $$;
