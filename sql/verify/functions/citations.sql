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
DO $$
BEGIN
  -- issue 26: cited_by of a hidden document gives nothing (the target's visibility is checked)
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.cited_by(bigint)'::regprocedure) LIKE '%t.id = $1%',
         'cited_by is the @v1.3 version (it lists who cites a hidden document)';
END $$;
