-- Verify scirag:functions/classify_intent_bootstrap
DO $$
BEGIN
  ASSERT (SELECT prosrc ~ 'GD.get\(''scirag_path_ready''\)' AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
                 AND prosecdef AND pg_get_userbyid(proowner) = 'scirag_api'
          FROM pg_proc WHERE oid = 'scirag.classify_intent(text)'::regprocedure),
         'scirag.classify_intent(text): bootstraps only when the backend has not yet, owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_loader', 'scirag.classify_intent(text)', 'EXECUTE'), 'scirag.classify_intent(text): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_reader', 'scirag.classify_intent(text)', 'EXECUTE'), 'scirag.classify_intent(text): scirag_reader lacks EXECUTE';
END $$;
