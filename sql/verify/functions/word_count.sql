-- Verify scirag:functions/word_count
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.word_count(text)'::regprocedure),
         'scirag.word_count(text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.word_count(text)', 'EXECUTE'), 'scirag.word_count(text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.word_count(text)', 'EXECUTE'), 'scirag.word_count(text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.word_count(text)', 'EXECUTE'), 'scirag.word_count(text): scirag_loader lacks EXECUTE';
END $$;
