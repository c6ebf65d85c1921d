-- Deploy scirag:functions/reader_api
-- Reworked (issue 26): document_outline checks the document's own row first, under
-- row-level security, and reads its chunks only when the document is visible. Before,
-- it walked every chunk of a hidden document and let row-level security drop each
-- one, so a hidden 3,000-chunk document took 0.68 ms against 0.20 ms for a missing id
-- (scripts/bench_security.py --ids): the cost told hidden from missing and scaled with
-- the hidden document. entities_visible bounds its id list (1,000). The other reader
-- API functions of this change (documents_visible, chunk_get, chunk_neighbours,
-- documents_all_visible, external_ids_all_visible) are as released in
-- functions/reader_api@v1.3.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.document_outline(id bigint)
RETURNS TABLE (chunk_id bigint, ordinal int, kind text, level int, section_path text, is_table boolean,
               line_start int, line_end int, page_start int, page_end int)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  -- The EXISTS names no column of c: the planner makes it a one-time filter, run
  -- before the chunks are read, so a hidden document costs one row's policy check.
  SELECT c.id, c.ordinal, c.kind, c.level, c.section_path, c.is_table, c.line_start, c.line_end,
         c.page_start, c.page_end
  FROM scirag.chunks c
  WHERE c.document_id = document_outline.id
    AND EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = document_outline.id)
  ORDER BY c.ordinal
$$;
COMMENT ON FUNCTION scirag.document_outline(bigint) IS
  'A visible document''s chunks in reading order, without text (location and section only); nothing for a hidden or unknown id, at a cost that does not depend on the hidden document''s size (its row is checked first). Reader API (security wall).';

-- entities_visible takes at most 1,000 ids (issue 26: every array argument is bounded).
CREATE OR REPLACE FUNCTION scirag.entities_visible(ids bigint[])
RETURNS TABLE (entity_id bigint, name text, entity_type text, declared boolean, canonical_entity_id bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM scirag.check_limit(cardinality(ids), 'the number of ids', 'scirag.entities_visible');
  RETURN QUERY
  SELECT e.id, e.name, e.entity_type, e.declared, e.canonical_entity_id
  FROM scirag.kg_entities e WHERE e.id = ANY (ids) ORDER BY e.id;
END $$;
COMMENT ON FUNCTION scirag.entities_visible(bigint[]) IS
  'The listed knowledge-graph entities (at most 1,000 ids) the caller may see (an entity is visible through visible evidence, under a name that evidence shows), without their alias lists. Reader API (security wall).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API functions
-- run as scirag_api, which owns no table, so row-level security keyed on the caller
-- (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.document_outline(bigint) OWNER TO scirag_api;
ALTER FUNCTION scirag.entities_visible(bigint[]) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.document_outline(bigint), scirag.entities_visible(bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.document_outline(bigint), scirag.entities_visible(bigint[]) TO scirag_reader, scirag_api, scirag_loader;
-- The safety net: the same settings for every listed API function (tests/pgtap/01_rls_sweep.sql).
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
