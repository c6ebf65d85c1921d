-- Deploy scirag:functions/citations
-- Citation links between corpus documents for readers, run as scirag_api (SECURITY
-- DEFINER, owner scirag_api, declared below) under the caller's row-level security.
-- Reworked (issue 26): a citation to a hidden document looks exactly like a citation
-- to a document that is not in the corpus. document_citations shows every citation
-- of a visible citing document (policies/citation_unresolved); references() resolves
-- a target only through a join with documents under row-level security, so a hidden
-- target comes back unresolved (DOI only), in the unresolved order; cited_by() of a
-- hidden or unknown id returns nothing, whatever cites it.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.references(document bigint)
RETURNS TABLE (cited_doi text, resolved boolean, cited_document_id bigint, external_id text, title text,
               year int, retracted boolean, origin text, chunk_id bigint)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  -- Resolved references first (they point at documents the caller can open), then
  -- the unresolved DOIs, which stay provenance only. d is NULL both for a DOI that
  -- is not in the corpus and for a document the caller may not see.
  SELECT c.cited_doi, d.id IS NOT NULL, d.id, d.external_id, d.title, d.year, d.retracted, c.origin, c.chunk_id
  FROM scirag.document_citations c
  LEFT JOIN scirag.documents d ON d.id = c.cited_document_id
  WHERE c.document_id = $1
  ORDER BY d.id IS NULL, c.cited_doi, c.origin, c.chunk_id
$$;
COMMENT ON FUNCTION scirag.references(bigint) IS
  'What a document cites, within the caller''s scope: one row per cited DOI, resolved (cited_document_id, external_id, title, year, retracted of the corpus document) or not (DOI only); origin text or crossref. A DOI of a document the caller may not see is unresolved, exactly like one not in the corpus. Nothing when the citing document is out of scope.';

CREATE OR REPLACE FUNCTION scirag.cited_by(document bigint)
RETURNS TABLE (document_id bigint, external_id text, title text, year int, retracted boolean, origin text,
               chunk_id bigint)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT d.id, d.external_id, d.title, d.year, d.retracted, c.origin, c.chunk_id
  FROM scirag.document_citations c
  JOIN scirag.documents d ON d.id = c.document_id
  WHERE c.cited_document_id = $1
    -- the cited document itself must be visible: a hidden one is cited by nobody
    AND EXISTS (SELECT 1 FROM scirag.documents t WHERE t.id = $1)
  ORDER BY d.year DESC NULLS LAST, d.id
$$;
COMMENT ON FUNCTION scirag.cited_by(bigint) IS
  'Corpus documents that cite a document (resolved citations only), within the caller''s scope: both the citing and the cited document must be visible; a hidden or unknown id gives no row.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API functions
-- run as scirag_api, which owns no table, so row-level security keyed on the caller
-- (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.references(bigint) OWNER TO scirag_api;
ALTER FUNCTION scirag.cited_by(bigint) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.references(bigint), scirag.cited_by(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.references(bigint), scirag.cited_by(bigint) TO scirag_reader, scirag_api, scirag_loader;
-- The safety net: the same settings for every listed API function (tests/pgtap/01_rls_sweep.sql).
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
