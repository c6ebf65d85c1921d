-- Verify scirag:functions/search_keyword
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_keyword(text, int, double precision)') IS NOT NULL, 'search_keyword missing';
  ASSERT 'jit=off' = ANY ((SELECT proconfig FROM pg_proc WHERE oid = 'scirag.search_keyword(text, int, double precision)'::regprocedure)::text[]),
         'search_keyword must run with jit off';
  PERFORM * FROM scirag.search_keyword('"unbalanced -(& | !) quote', 5);
  BEGIN
    PERFORM * FROM scirag.search_keyword(repeat('x', 4001), 5);
    RAISE EXCEPTION 'search_keyword must refuse a query over 4000 characters';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
  BEGIN
    PERFORM * FROM scirag.search_keyword('x', 1001);
    RAISE EXCEPTION 'search_keyword must refuse n over 1000';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
