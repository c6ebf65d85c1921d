-- Deploy scirag:functions/scope_narrow
-- A question asked of one paper ("ask this paper", scirag.documents) was slow in the
-- dense and keyword layers: both searched the whole corpus's indexes (HNSW, BM25
-- blocks) and let row-level security drop every chunk of the other papers, so the
-- keyword layer read and checked hundreds of other papers' postings (50-200 ms for a
-- paper of 30 chunks among 9,000) and the dense layer ran HNSW's iterative scan until
-- it had found enough of the paper's chunks. When the positive filters admit few
-- chunks, scoring exactly those (through the chunks_document index) is cheaper and
-- exact. scirag.scope_narrow_documents() says when: search_vector and kw_top ask it.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_narrow_documents()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  -- Up to this many chunks a layer scores every admitted chunk. Measured on QASPER dev
  -- (9,001 chunks), the keyword layer's direct scoring took a few ms for one paper
  -- against 50-200 ms for the block-max walk, and 41-49 ms for 32 papers (980 chunks)
  -- against 92-124 ms: still cheaper here, and it grows with the chunks admitted.
  max_chunks constant int := 1000;
  docs bigint[] := scirag.scope_documents();
BEGIN
  IF docs IS NULL OR cardinality(docs) > max_chunks THEN
    RETURN NULL;  -- no positive filter, or one that admits too much to scan
  END IF;
  -- counted as the caller sees the chunks (row-level security keyed on the caller):
  -- the choice of path depends on nothing the caller cannot see
  IF (SELECT count(*) FROM (SELECT 1 FROM scirag.chunks c
                            WHERE c.document_id = ANY (docs) LIMIT max_chunks + 1) s) > max_chunks THEN
    RETURN NULL;
  END IF;
  RETURN docs;
END $$;
COMMENT ON FUNCTION scirag.scope_narrow_documents() IS
  'The documents the positive scope filters admit (scirag.scope_documents()) when they hold at most 1,000 chunks the caller sees, else NULL: the dense and keyword layers then score those chunks directly (exact, through the chunks_document index) instead of walking the whole corpus''s indexes. Internal: called by search_vector and kw_top (as scirag_api).';

REVOKE ALL ON FUNCTION scirag.scope_narrow_documents() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_narrow_documents() TO scirag_api;
COMMIT;
