-- Verify scirag:functions/eval_compare
DO $$
BEGIN
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.eval_compare(bigint, bigint)'::regprocedure),
         'scirag.eval_compare(bigint, bigint): SECURITY INVOKER with a pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.eval_compare(bigint, bigint)', 'EXECUTE')
         AND has_function_privilege('scirag_api', 'scirag.eval_compare(bigint, bigint)', 'EXECUTE'),
         'scirag.eval_compare(bigint, bigint): scirag_reader or scirag_api may not run it';
END $$;
