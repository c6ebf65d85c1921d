-- Verify scirag:functions/embed
-- (Whether it is SECURITY DEFINER is policies/reader_wall's to verify: that change runs last.)
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.embed_query(text)') IS NOT NULL, 'embed_query missing';
  ASSERT (SELECT 'search_path=pg_catalog, pg_temp' = ANY (proconfig) FROM pg_proc
          WHERE oid = 'scirag.embed_query(text)'::regprocedure), 'embed_query must pin search_path';
  ASSERT obj_description('scirag.embed_query(text)'::regprocedure, 'pg_proc') LIKE '%keyed by the caller%',
         'embed_query: the reworked version (cache keyed by the caller) is not deployed';
END $$;
