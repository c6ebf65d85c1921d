-- Deploy scirag:functions/citations
-- Citation links between corpus documents for readers. Plain SQL: row-level security
-- on document_citations (the citing document in scope, and a resolved target only when
-- that document is visible too) and on documents decides what a caller sees; nothing
-- here restates a scope rule. Reworked (security wall, issue 13): readers hold no
-- privilege on those tables, so policies/reader_wall (the last change) makes both
-- functions SECURITY DEFINER owned by scirag_api, under the caller's row-level security.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.references(document bigint)
RETURNS TABLE (cited_doi text, resolved boolean, cited_document_id bigint, external_id text, title text,
               year int, retracted boolean, origin text, chunk_id bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Resolved references first (they point at documents the caller can open), then
  -- the unresolved DOIs, which stay provenance only.
  SELECT c.cited_doi, d.id IS NOT NULL, d.id, d.external_id, d.title, d.year, d.retracted, c.origin, c.chunk_id
  FROM scirag.document_citations c
  LEFT JOIN scirag.documents d ON d.id = c.cited_document_id
  WHERE c.document_id = $1
  ORDER BY d.id IS NULL, c.cited_doi
$$;
COMMENT ON FUNCTION scirag.references(bigint) IS
  'What a document cites, within the caller''s scope: one row per cited DOI, resolved (cited_document_id, external_id, title, year, retracted of the corpus document) or not (DOI only); origin text or crossref. Nothing when the citing document is out of scope.';

CREATE OR REPLACE FUNCTION scirag.cited_by(document bigint)
RETURNS TABLE (document_id bigint, external_id text, title text, year int, retracted boolean, origin text,
               chunk_id bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT d.id, d.external_id, d.title, d.year, d.retracted, c.origin, c.chunk_id
  FROM scirag.document_citations c
  JOIN scirag.documents d ON d.id = c.document_id
  WHERE c.cited_document_id = $1
  ORDER BY d.year DESC NULLS LAST, d.id
$$;
COMMENT ON FUNCTION scirag.cited_by(bigint) IS
  'Corpus documents that cite a document (resolved citations only), within the caller''s scope: both the citing and the cited document must be visible.';

REVOKE ALL ON FUNCTION scirag.references(bigint), scirag.cited_by(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.references(bigint), scirag.cited_by(bigint) TO scirag_reader, scirag_loader;
COMMIT;
