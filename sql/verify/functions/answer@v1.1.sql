-- Verify scirag:functions/answer
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.answer(text, jsonb)') IS NOT NULL, 'scirag.answer(text, jsonb) missing';
  ASSERT to_regprocedure('scirag.answer_text(text, jsonb)') IS NOT NULL, 'scirag.answer_text(text, jsonb) missing';
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.answer(text, jsonb)'::regprocedure),
         'scirag.answer must be SECURITY INVOKER';
  ASSERT (SELECT 'search_path=pg_catalog, pg_temp' = ANY (proconfig) FROM pg_proc
          WHERE oid = 'scirag.answer(text, jsonb)'::regprocedure), 'scirag.answer must pin search_path';
  ASSERT obj_description('scirag.answer(text, jsonb)'::regprocedure, 'pg_proc') LIKE '%supports%',
         'scirag.answer: the reworked version (supports check, evidence stages) is not deployed';
END $$;
