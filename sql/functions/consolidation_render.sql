-- Deploy scirag:functions/consolidation_render
-- Split (issue 28): scirag.consolidation_render, moved out of functions/consolidate (as sql/functions/consolidate@v1.3.sql defines
-- it; the rework after @v1.3 now holds consolidation_groups only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/consolidation_render` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.consolidation_render(g scirag.consolidation_group, enrich_from_parent boolean,
  OUT content text, OUT section_path text, OUT line_start int, OUT line_end int)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  u record;
  bodies text[] := '{}';
  ords int[] := '{}';
  paths text[] := '{}';
  n int;
  pbody text;
  ppath text;
  loc1 int[];
  loc2 int[];
  i int;
BEGIN
  FOR u IN SELECT c.ordinal AS ord, c.body AS c_body, c.section_path AS c_path,
                  c.line_start AS ls, c.line_end AS le
           FROM scirag.chunks c
           WHERE c.document_id = g.document_id AND c.ordinal = ANY (g.units)
           ORDER BY c.ordinal LOOP
    bodies := bodies || u.c_body;
    ords := ords || u.ord;
    paths := paths || u.c_path;
    line_start := least(line_start, u.ls);
    line_end := greatest(line_end, u.le);
  END LOOP;
  n := cardinality(bodies);
  IF n = 0 THEN
    RETURN;
  ELSIF n = 1 THEN
    content := bodies[1];
    section_path := paths[1];
    RETURN;
  END IF;
  SELECT p.body, p.section_path INTO pbody, ppath
  FROM scirag.chunks p WHERE p.document_id = g.document_id AND p.ordinal = g.parent_ordinal;
  section_path := coalesce(ppath, paths[1]);
  IF enrich_from_parent AND pbody IS NOT NULL THEN
    -- The parent holds the siblings' text once, in order, with whatever lies
    -- between them: cut the span from the first unit to the last out of it.
    loc1 := scirag.locate_text(pbody, bodies[1]);
    IF loc1 IS NOT NULL THEN
      loc2 := scirag.locate_text(pbody, bodies[n], loc1[1]);
    END IF;
    IF loc2 IS NOT NULL AND loc2[2] > loc1[1] THEN
      content := substr(pbody, loc1[1], loc2[2] - loc1[1]);
      RETURN;
    END IF;
  END IF;
  content := bodies[1];
  FOR i IN 2..n LOOP
    IF EXISTS (SELECT 1 FROM scirag.chunks s
               WHERE s.document_id = g.document_id AND s.parent_ordinal IS NOT DISTINCT FROM g.parent_ordinal
                 AND s.ordinal > ords[i - 1] AND s.ordinal < ords[i]) THEN
      content := content || E'\n\n[…]\n\n' || bodies[i];     -- a sibling left out is marked
    ELSE
      content := scirag.join_overlapping(content, bodies[i]);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.consolidation_render(scirag.consolidation_group, boolean) IS
  'The text (without title/path prefix), heading breadcrumb and source line span of a context group. Several units are cut from the parent''s text when enrich_from_parent (perfect continuity), else joined with the overlap removed and omissions marked "[…]".';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.consolidation_render(scirag.consolidation_group, boolean) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.consolidation_render(scirag.consolidation_group, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.consolidation_render(scirag.consolidation_group, boolean) TO scirag_reader, scirag_loader;
COMMIT;
