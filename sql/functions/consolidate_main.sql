-- Deploy scirag:functions/consolidate_main
-- Split (issue 28): scirag.consolidate, moved out of functions/consolidate (as sql/functions/consolidate@v1.3.sql defines
-- it; the rework after @v1.3 now holds consolidation_groups only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/consolidate_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.consolidate(chunk_ids bigint[], options jsonb DEFAULT '{}')
RETURNS TABLE (group_no int, document_id bigint, chunk_ids bigint[], replaced_by bigint, section_path text,
               content text, line_start int, line_end int)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT (row_number() OVER (ORDER BY g.best, g.document_id, g.units[1]))::int,
         g.document_id,
         ARRAY(SELECT c.id FROM scirag.chunks c WHERE c.id = ANY (g.members) ORDER BY c.ordinal),
         g.replaced_by, r.section_path, r.content, r.line_start, r.line_end
  FROM unnest(scirag.consolidation_groups($1, $2)) AS g
  CROSS JOIN LATERAL scirag.consolidation_render(
    g, (scirag.consolidation_config($2)->>'enrich_from_parent')::boolean) AS r
  ORDER BY 1
$$;
COMMENT ON FUNCTION scirag.consolidate(bigint[], jsonb) IS
  'Consolidation over retrieved chunk ids, e.g. scirag.consolidate(ARRAY(SELECT chunk_id FROM scirag.retrieve(q, 10))). Returns context groups ordered by their best-ranked member: the chunks they account for, the parent that replaced them (coverage >= coverage_threshold, default 0.5), the heading breadcrumb, the text (no title/path prefix) and its source lines. options: coverage_threshold, line_gap (7), min_content_length (350 characters; shorter groups take in neighbouring siblings), enrich_from_parent (true: merged text is cut from the parent), preset (take these from a named preset). Unreadable ids are dropped.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.consolidate(bigint[], jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.consolidate(bigint[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.consolidate(bigint[], jsonb) TO scirag_reader, scirag_loader;
COMMIT;
