-- Verify scirag:functions/search_keyword
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_keyword(text, int, double precision)') IS NOT NULL, 'search_keyword missing';
  ASSERT 'jit=off' = ANY ((SELECT proconfig FROM pg_proc WHERE oid = 'scirag.search_keyword(text, int, double precision)'::regprocedure)::text[]),
         'search_keyword must run with jit off';
  ASSERT to_regprocedure('scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)') IS NOT NULL,
         'scirag.kw_top (the numpy scorer) is missing';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)', 'EXECUTE'),
         'readers must not call scirag.kw_top directly (it takes statistics on trust)';
  ASSERT to_regprocedure('scirag.kw_top_trace()') IS NOT NULL, 'scirag.kw_top_trace (diagnostics) is missing';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.kw_top_trace()', 'EXECUTE')
     AND NOT has_function_privilege('scirag_api', 'scirag.kw_top_trace()', 'EXECUTE'),
         'kw_top_trace counts postings of rows the caller cannot see: superusers only';
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
