-- Verify scirag:functions/search_community
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_community(public.vector, int)') IS NOT NULL, 'search_community missing';
  ASSERT to_regprocedure('scirag.search_community_chunks(public.vector, int)') IS NOT NULL, 'search_community_chunks missing';
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.search_community(public.vector, int)'::regprocedure),
    'search_community must be SECURITY INVOKER';
  ASSERT has_function_privilege('scirag_reader', 'scirag.search_community_chunks(public.vector, int)', 'EXECUTE'),
    'reader cannot run search_community_chunks';
  ASSERT coalesce((SELECT 'jit=off' = ANY(proconfig) FROM pg_proc WHERE oid = 'scirag.search_community(public.vector, int)'::regprocedure), false),
    'search_community must run with jit = off';
  ASSERT coalesce((SELECT 'jit=off' = ANY(proconfig) FROM pg_proc WHERE oid = 'scirag.search_community_chunks(public.vector, int)'::regprocedure), false),
    'search_community_chunks must run with jit = off';
END $$;
