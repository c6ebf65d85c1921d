-- Deploy scirag:functions/retrieve_evidence
-- The answerer's retrieval (issue 28 item 3): scirag.retrieve's rows with each chunk's
-- stored body, in one statement, so that scirag.answer no longer queries scirag.chunks
-- again after retrieving. An internal variant, not a change of scirag.retrieve's
-- RETURNS TABLE: retrieve's eleven columns are an API (psql, REST, MCP, the pgTAP
-- contract tests, the docs), and the body is the answerer's concern only.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_evidence(query text, k int, profile text, options jsonb)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb,
               body text)
LANGUAGE sql VOLATILE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
  -- SECURITY INVOKER: it runs as scirag.answer's body does (scirag_api for a reader,
  -- or the loader), so row-level security reads the body exactly as it read the row;
  -- a chunk it cannot read drops out, as retrieve's own rows do.
  SELECT r.rank, r.chunk_id, r.document_id, r.external_id, r.score, r.layers, r.title, r.section_path,
         r.content, r.is_table, r.citation, c.body
  FROM scirag.retrieve(query, k, profile, options) AS r
  JOIN scirag.chunks AS c ON c.id = r.chunk_id
  ORDER BY r.rank
$$;
COMMENT ON FUNCTION scirag.retrieve_evidence(text, int, text, jsonb) IS
  'The answerer''s retrieval: scirag.retrieve(query, k, profile, options) with each chunk''s stored body (scirag.chunks.body: the text without the title / section prefix), rank order, in one statement. Internal (scirag.answer''s PL/Python body calls it); readers use scirag.retrieve, whose columns it leaves unchanged.';

REVOKE ALL ON FUNCTION scirag.retrieve_evidence(text, int, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_evidence(text, int, text, jsonb) TO scirag_api, scirag_loader;
COMMIT;
