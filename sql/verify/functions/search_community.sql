-- Verify scirag:functions/search_community
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_community(public.vector, int)') IS NOT NULL, 'search_community missing';
  ASSERT to_regprocedure('scirag.search_community_chunks(public.vector, int)') IS NOT NULL, 'search_community_chunks missing';
  ASSERT has_function_privilege('scirag_reader', 'scirag.search_community_chunks(public.vector, int)', 'EXECUTE'),
    'reader cannot run search_community_chunks';
  ASSERT coalesce((SELECT 'jit=off' = ANY(proconfig) FROM pg_proc WHERE oid = 'scirag.search_community(public.vector, int)'::regprocedure), false),
    'search_community must run with jit = off';
  ASSERT coalesce((SELECT 'jit=off' = ANY(proconfig) FROM pg_proc WHERE oid = 'scirag.search_community_chunks(public.vector, int)'::regprocedure), false),
    'search_community_chunks must run with jit = off';
  BEGIN
    PERFORM count(*) FROM scirag.search_community(NULL, 1001);
    RAISE EXCEPTION 'search_community accepted n = 1001';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
  BEGIN
    PERFORM count(*) FROM scirag.search_community_chunks(NULL, 1001);
    RAISE EXCEPTION 'search_community_chunks accepted n = 1001';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
