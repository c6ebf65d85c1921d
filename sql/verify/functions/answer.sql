-- Verify scirag:functions/answer
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.answer(text, jsonb)') IS NOT NULL, 'scirag.answer(text, jsonb) missing';
  ASSERT to_regprocedure('scirag.answer_text(text, jsonb)') IS NOT NULL, 'scirag.answer_text(text, jsonb) missing';
  ASSERT (SELECT 'search_path=pg_catalog, pg_temp' = ANY (proconfig) FROM pg_proc
          WHERE oid = 'scirag.answer(text, jsonb)'::regprocedure), 'scirag.answer must pin search_path';
  ASSERT obj_description('scirag.answer(text, jsonb)'::regprocedure, 'pg_proc') LIKE '%supports%',
         'scirag.answer: the reworked version (supports check, evidence stages) is not deployed';
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.answer(text, jsonb)'::regprocedure) LIKE '%scirag.check_question%',
         'scirag.answer must bound the question through scirag.check_question';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.answer_generate(text, jsonb)', 'EXECUTE'),
         'readers must not reach the answerer without the question bound';
  BEGIN
    PERFORM scirag.answer(repeat('a', 4001));
    RAISE EXCEPTION 'scirag.answer accepted a question of 4001 characters';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
