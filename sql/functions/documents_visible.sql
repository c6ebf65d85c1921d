-- Deploy scirag:functions/documents_visible
-- Split (issue 28): scirag.documents_visible, moved out of functions/reader_api (sql/functions/reader_api@v1.3.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/documents_visible` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.documents_visible(ref text DEFAULT NULL)
RETURNS TABLE (document_id bigint, external_id text, title text, authors text[], year int, journal text,
               doi text, arxiv_id text, license text, source text, retracted boolean, parser text,
               pages int, ingested_at timestamptz, metadata_inferred text[])
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF length(ref) > 1024 THEN
    RAISE EXCEPTION 'scirag.documents_visible: ref is % characters long, at most 1024 allowed', length(ref)
      USING ERRCODE = '22023';
  END IF;
  -- Two statements, not "ref IS NULL OR ...": each keeps its own plan (an index probe for one ref).
  IF ref IS NULL THEN
    RETURN QUERY
    SELECT d.id, d.external_id, d.title, d.authors, d.year, d.journal, d.doi, d.arxiv_id, d.license::text,
           d.source, d.retracted, d.parser, d.pages, d.ingested_at, d.metadata_inferred
    FROM scirag.documents d ORDER BY d.id;
  ELSE
    RETURN QUERY
    SELECT d.id, d.external_id, d.title, d.authors, d.year, d.journal, d.doi, d.arxiv_id, d.license::text,
           d.source, d.retracted, d.parser, d.pages, d.ingested_at, d.metadata_inferred
    FROM scirag.documents d
    WHERE d.external_id = ref OR d.id = CASE WHEN ref ~ '^[0-9]{1,18}$' THEN ref::bigint END
    ORDER BY d.id;
  END IF;
END $$;
COMMENT ON FUNCTION scirag.documents_visible(text) IS
  'The documents the caller may see (all, or the one whose manifest id or numeric id is ref): public columns only, no server path. Reader API (security wall).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.documents_visible(text) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.documents_visible(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.documents_visible(text) TO scirag_loader, scirag_reader;
COMMIT;
