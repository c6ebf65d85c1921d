-- Verify scirag:functions/answer_generate_bootstrap
DO $$
BEGIN
  ASSERT (SELECT prosrc ~ 'GD.get\(''scirag_path_ready''\)' AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.answer_generate(text, jsonb)'::regprocedure),
         'scirag.answer_generate(text, jsonb): bootstraps only when the backend has not yet, pinned search_path';
  ASSERT has_function_privilege('scirag_loader', 'scirag.answer_generate(text, jsonb)', 'EXECUTE'), 'scirag.answer_generate(text, jsonb): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.answer_generate(text, jsonb)', 'EXECUTE'), 'scirag.answer_generate(text, jsonb): scirag_api lacks EXECUTE';
END $$;
