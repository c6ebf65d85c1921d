-- Verify scirag:functions/citations
-- (Whether they are SECURITY DEFINER is policies/reader_wall's to verify: that change runs last.)
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.references(bigint)') IS NOT NULL, 'scirag.references(bigint) missing';
  ASSERT to_regprocedure('scirag.cited_by(bigint)') IS NOT NULL, 'scirag.cited_by(bigint) missing';
  ASSERT (SELECT bool_and('search_path=pg_catalog, pg_temp' = ANY (proconfig)) FROM pg_proc
          WHERE oid IN ('scirag.references(bigint)'::regprocedure, 'scirag.cited_by(bigint)'::regprocedure)),
         'scirag.references and scirag.cited_by must pin search_path';
END $$;
