-- Verify scirag:functions/rerank
-- (Not called here: PL/Python needs scirag.settings.python_path, which `scirag db init`
-- writes after the deploy. Whether it is SECURITY DEFINER is the wall's business:
-- policies/reader_wall makes it one.)
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.rerank(text, bigint[], text[], jsonb)') IS NOT NULL, 'rerank missing';
  ASSERT (SELECT proconfig FROM pg_proc WHERE oid = 'scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure)
         @> ARRAY['search_path=pg_catalog, pg_temp'], 'rerank must pin its search_path';
  ASSERT obj_description('scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure, 'pg_proc') LIKE '%reranker_model_path%',
         'rerank comment must say where the model folder comes from';
  ASSERT obj_description('scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure, 'pg_proc') LIKE '%QUANTITY%',
         'rerank comment must name the intent classes';
END $$;
