-- Verify scirag:functions/search_vector
DO $$
DECLARE
  cfg text[] := (SELECT proconfig FROM pg_proc WHERE oid = 'scirag.search_vector(public.vector, int)'::regprocedure);
BEGIN
  ASSERT cfg IS NOT NULL, 'search_vector missing';
  ASSERT 'jit=off' = ANY (cfg), 'search_vector must run with jit off';
  ASSERT NOT EXISTS (SELECT 1 FROM unnest(cfg) x WHERE x LIKE 'enable\_%'),
         'search_vector must not change planner enable_* settings (they leak into the scope functions)';
END $$;
