-- Revert scirag:functions/reader_api (document_outline and entities_visible back to its @v1.3 version; the
-- released script itself creates every reader API function and cannot run again)
BEGIN;
CREATE OR REPLACE FUNCTION scirag.document_outline(id bigint)
RETURNS TABLE (chunk_id bigint, ordinal int, kind text, level int, section_path text, is_table boolean,
               line_start int, line_end int, page_start int, page_end int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT c.id, c.ordinal, c.kind, c.level, c.section_path, c.is_table, c.line_start, c.line_end,
         c.page_start, c.page_end
  FROM scirag.chunks c WHERE c.document_id = document_outline.id ORDER BY c.ordinal
$$;
COMMENT ON FUNCTION scirag.document_outline(bigint) IS
  'A visible document''s chunks in reading order, without text (location and section only). Reader API (security wall).';
DROP FUNCTION scirag.entities_visible(bigint[]);
CREATE FUNCTION scirag.entities_visible(ids bigint[])
RETURNS TABLE (entity_id bigint, name text, entity_type text, declared boolean, canonical_entity_id bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT e.id, e.name, e.entity_type, e.declared, e.canonical_entity_id
  FROM scirag.kg_entities e WHERE e.id = ANY (ids) ORDER BY e.id
$$;
COMMENT ON FUNCTION scirag.entities_visible(bigint[]) IS
  'The listed knowledge-graph entities the caller may see (an entity is visible through visible evidence, under a name that evidence shows), without their alias lists. Reader API (security wall).';
REVOKE ALL ON FUNCTION scirag.entities_visible(bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.entities_visible(bigint[]) TO scirag_reader, scirag_loader;
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
