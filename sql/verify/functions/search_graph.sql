-- Verify scirag:functions/search_graph
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_graph(text, int)') IS NOT NULL, 'search_graph missing';
  ASSERT to_regprocedure('scirag.graph_seed_entities(text, text[])') IS NOT NULL, 'graph_seed_entities missing';
  ASSERT has_function_privilege('scirag_reader', 'scirag.search_graph(text, int)', 'EXECUTE'),
    'reader cannot run search_graph';
  ASSERT (SELECT count(*) FROM scirag.search_graph('', 10)) = 0, 'search_graph of an empty question returned rows';
  ASSERT coalesce((SELECT 'jit=off' = ANY(proconfig) FROM pg_proc WHERE oid = 'scirag.search_graph(text, int)'::regprocedure), false),
    'search_graph must run with jit = off';
  ASSERT coalesce((SELECT 'jit=off' = ANY(proconfig) FROM pg_proc WHERE oid = 'scirag.graph_seed_entities(text, text[])'::regprocedure), false),
    'graph_seed_entities must run with jit = off';
  BEGIN
    PERFORM count(*) FROM scirag.search_graph(repeat('a', 4001), 10);
    RAISE EXCEPTION 'search_graph accepted a question of 4001 characters';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
  BEGIN
    PERFORM count(*) FROM scirag.search_graph('straw', 1001);
    RAISE EXCEPTION 'search_graph accepted n = 1001';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
