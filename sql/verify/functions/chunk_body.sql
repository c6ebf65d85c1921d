-- Verify scirag:functions/chunk_body
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.chunk_body(text, text, text)'::regprocedure),
         'scirag.chunk_body(text, text, text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.chunk_body(text, text, text)', 'EXECUTE'), 'scirag.chunk_body(text, text, text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.chunk_body(text, text, text)', 'EXECUTE'), 'scirag.chunk_body(text, text, text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.chunk_body(text, text, text)', 'EXECUTE'), 'scirag.chunk_body(text, text, text): scirag_loader lacks EXECUTE';
END $$;
