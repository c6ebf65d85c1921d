-- Verify scirag:functions/search_vector
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_vector(public.vector, int)') IS NOT NULL, 'search_vector missing';
END $$;
