-- Verify scirag:functions/search_keyword
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_keyword(text, int, double precision)') IS NOT NULL, 'search_keyword missing';
  PERFORM * FROM scirag.search_keyword('"unbalanced -(& | !) quote', 5);
END $$;
