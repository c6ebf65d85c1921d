-- Verify scirag:functions/search_keyword
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_keyword(text, int, double precision)') IS NOT NULL, 'search_keyword missing';
  ASSERT 'jit=off' = ANY ((SELECT proconfig FROM pg_proc WHERE oid = 'scirag.search_keyword(text, int, double precision)'::regprocedure)::text[]),
         'search_keyword must run with jit off';
  PERFORM * FROM scirag.search_keyword('"unbalanced -(& | !) quote', 5);
END $$;
