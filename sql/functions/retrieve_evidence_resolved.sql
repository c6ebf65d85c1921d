-- Deploy scirag:functions/retrieve_evidence_resolved
-- The preset resolved once per answer (issue 28): scirag.retrieve_evidence takes the
-- preset scirag.answer resolved (scirag.preset_resolve) and hands it to scirag.retrieve,
-- whose configuration uses it instead of resolving the preset again. Without it (NULL,
-- the default) the rows are those of scirag.retrieve(query, k, profile, options), as
-- before. Its revert drops this signature and re-creates functions/retrieve_evidence.
BEGIN;

DROP FUNCTION scirag.retrieve_evidence(text, int, text, jsonb);

CREATE FUNCTION scirag.retrieve_evidence(query text, k int, profile text, options jsonb, preset jsonb DEFAULT NULL)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb,
               body text)
LANGUAGE sql VOLATILE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
  -- SECURITY INVOKER: it runs as scirag.answer's body does (scirag_api for a reader,
  -- or the loader), so row-level security reads the body exactly as it read the row;
  -- a chunk it cannot read drops out, as retrieve's own rows do. scirag.answer checked
  -- the question's length before (retrieve_layers bounds it again).
  SELECT r.rank, r.chunk_id, r.document_id, r.external_id, r.score, r.layers, r.title, r.section_path,
         r.content, r.is_table, r.citation, c.body
  FROM scirag.retrieve(query, k, profile, options, NULL::public.vector, preset) AS r
  JOIN scirag.chunks AS c ON c.id = r.chunk_id
  ORDER BY r.rank
$$;
COMMENT ON FUNCTION scirag.retrieve_evidence(text, int, text, jsonb, jsonb) IS
  'The answerer''s retrieval: scirag.retrieve(query, k, profile, options) with each chunk''s stored body (scirag.chunks.body: the text without the title / section prefix), rank order, in one statement. preset: the scirag.preset_resolve result scirag.answer already has for options.preset, so that the preset is resolved once per answer (NULL: retrieve resolves it). Internal (scirag.answer''s PL/Python body calls it); readers use scirag.retrieve, whose columns it leaves unchanged.';

REVOKE ALL ON FUNCTION scirag.retrieve_evidence(text, int, text, jsonb, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_evidence(text, int, text, jsonb, jsonb) TO scirag_api, scirag_loader;
COMMIT;
