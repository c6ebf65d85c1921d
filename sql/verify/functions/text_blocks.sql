-- Verify scirag:functions/text_blocks
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.text_blocks(text)'::regprocedure),
         'scirag.text_blocks(text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.text_blocks(text)', 'EXECUTE'), 'scirag.text_blocks(text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.text_blocks(text)', 'EXECUTE'), 'scirag.text_blocks(text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.text_blocks(text)', 'EXECUTE'), 'scirag.text_blocks(text): scirag_loader lacks EXECUTE';
END $$;
