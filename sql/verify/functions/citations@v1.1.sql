-- Verify scirag:functions/citations
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.references(bigint)') IS NOT NULL, 'scirag.references(bigint) missing';
  ASSERT to_regprocedure('scirag.cited_by(bigint)') IS NOT NULL, 'scirag.cited_by(bigint) missing';
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.references(bigint)'::regprocedure),
         'scirag.references must be SECURITY INVOKER';
  ASSERT NOT (SELECT prosecdef FROM pg_proc WHERE oid = 'scirag.cited_by(bigint)'::regprocedure),
         'scirag.cited_by must be SECURITY INVOKER';
END $$;
