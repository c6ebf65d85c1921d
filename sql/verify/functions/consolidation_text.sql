-- Verify scirag:functions/consolidation_text
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.join_overlapping(text, text)'::regprocedure),
         'scirag.join_overlapping(text, text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.join_overlapping(text, text)', 'EXECUTE'), 'scirag.join_overlapping(text, text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.join_overlapping(text, text)', 'EXECUTE'), 'scirag.join_overlapping(text, text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.join_overlapping(text, text)', 'EXECUTE'), 'scirag.join_overlapping(text, text): scirag_loader lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.covered_length(text, text[])'::regprocedure),
         'scirag.covered_length(text, text[]): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.covered_length(text, text[])', 'EXECUTE'), 'scirag.covered_length(text, text[]): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.covered_length(text, text[])', 'EXECUTE'), 'scirag.covered_length(text, text[]): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.covered_length(text, text[])', 'EXECUTE'), 'scirag.covered_length(text, text[]): scirag_loader lacks EXECUTE';
END $$;
