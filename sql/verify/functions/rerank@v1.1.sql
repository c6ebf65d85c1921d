-- Verify scirag:functions/rerank
-- (Not called here: PL/Python needs scirag.settings.python_path, which `scirag db init`
-- writes after the deploy.)
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.rerank(text, bigint[], text[], jsonb)') IS NOT NULL, 'rerank missing';
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure),
         'rerank must be SECURITY INVOKER';
  ASSERT obj_description('scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure, 'pg_proc') LIKE '%reranker_model_path%',
         'rerank comment must say where the model folder comes from';
END $$;
