-- Revert scirag:functions/citation_text
-- Restores scirag.citation as functions/retrieve defines it.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.citation(d scirag.documents, c scirag.chunks)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'document_id', d.id, 'external_id', d.external_id, 'chunk_id', c.id, 'title', d.title,
    'authors', to_jsonb(d.authors), 'year', d.year, 'doi', d.doi, 'license', d.license::text,
    'retracted', coalesce(d.retracted, false),
    'section_path', scirag.breadcrumb(d.title, c.section_path),
    'pages', CASE WHEN c.page_start IS NOT NULL THEN
               CASE WHEN c.page_end IS DISTINCT FROM c.page_start THEN c.page_start || '-' || c.page_end
                    ELSE c.page_start::text END END,
    'lines', CASE WHEN c.line_start IS NOT NULL THEN c.line_start || '-' || coalesce(c.line_end, c.line_start) END,
    -- a citation of a retracted document says so (issue 14), also when exclude_retracted is off
    'cite', CASE WHEN d.retracted THEN 'RETRACTED: ' ELSE '' END || concat_ws(', ',
              CASE WHEN cardinality(d.authors) > 2 THEN d.authors[1] || ' et al.'
                   ELSE array_to_string(d.authors, ' & ') END || CASE WHEN d.year IS NOT NULL THEN ' (' || d.year || ')' END,
              d.title,
              scirag.breadcrumb(d.title, c.section_path),
              CASE WHEN c.page_start IS NOT NULL THEN 'p. ' || c.page_start
                   WHEN c.line_start IS NOT NULL THEN 'lines ' || c.line_start || '-' || coalesce(c.line_end, c.line_start) END,
              CASE WHEN d.doi IS NOT NULL THEN 'doi:' || d.doi END)))
$$;
COMMENT ON FUNCTION scirag.citation(scirag.documents, scirag.chunks) IS
  'Citation of a chunk: document identity, retracted (true/false), section path, page or line span, and a human-readable "cite" string (prefixed "RETRACTED: " for a retracted document).';
COMMENT ON FUNCTION scirag.citation(scirag.documents, scirag.chunks) IS
  'Citation of a chunk: document identity, retracted (true/false), section path, page or line span, and a human-readable "cite" string (prefixed "RETRACTED: " for a retracted document).';
-- CREATE OR REPLACE resets what the wall set: apply it again
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
