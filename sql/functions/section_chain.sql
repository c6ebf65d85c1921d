-- Deploy scirag:functions/section_chain
-- Split (issue 28): scirag.section_chain, moved out of functions/consolidate (as sql/functions/consolidate@v1.3.sql defines
-- it; the rework after @v1.3 now holds consolidation_groups only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/section_chain` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.section_chain(document_id bigint, ordinal int)
RETURNS int[]
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  -- The chunk's ordinal and every ancestor's, innermost first (readable rows only).
  WITH RECURSIVE up(ord, parent, depth) AS (
    SELECT c.ordinal, c.parent_ordinal, 0 FROM scirag.chunks c
    WHERE c.document_id = section_chain.document_id AND c.ordinal = section_chain.ordinal
    UNION ALL
    SELECT p.ordinal, p.parent_ordinal, up.depth + 1
    FROM up JOIN scirag.chunks p ON p.document_id = section_chain.document_id AND p.ordinal = up.parent
    WHERE up.depth < 64)
  SELECT coalesce(array_agg(ord ORDER BY depth), '{}') FROM up
$$;
COMMENT ON FUNCTION scirag.section_chain(bigint, int) IS
  'Ordinals of a chunk and of its enclosing sections, innermost first, as far as the caller can read them.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.section_chain(bigint, int) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.section_chain(bigint, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.section_chain(bigint, int) TO scirag_reader, scirag_loader;
COMMIT;
