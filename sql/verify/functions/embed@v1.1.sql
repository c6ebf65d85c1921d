-- Verify scirag:functions/embed
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.embed_query(text)') IS NOT NULL, 'embed_query missing';
  ASSERT (SELECT NOT prosecdef FROM pg_proc WHERE oid = 'scirag.embed_query(text)'::regprocedure),
         'embed_query must be SECURITY INVOKER';
END $$;
