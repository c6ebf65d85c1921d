-- Deploy scirag:functions/consolidate
-- Reworked (issue 26): chunk_ids holds at most 1,000 ids (scirag.check_limit), checked
-- in consolidation_groups, which consolidate calls.
-- Since the split (issue 28, docs/releasing.md "One object per change") this rework
-- holds only the function it changes, scirag.consolidation_groups: the consolidation
-- loop (containment, coverage-based replacement by the parent section, adjacent merging
-- of nearby siblings, growth of groups shorter than min_content_length, repeated until
-- nothing changes). The other functions of functions/consolidate@v1.3 are unchanged by
-- it and live in changes of their own: consolidation_config, section_chain,
-- consolidation_text (join_overlapping, covered_length), consolidation_render,
-- consolidate_main (scirag.consolidate). Its revert still restores the whole @v1.3
-- script. consolidation_groups runs as scirag_api (SECURITY DEFINER, owner scirag_api,
-- declared below), which owns no table: every read of scirag.chunks / scirag.documents
-- goes through row-level security keyed on the caller (scirag.scope_role()), so a
-- parent, a sibling or a merged neighbour is used only when the caller may read it.
BEGIN;

-- scirag.consolidation_group (the type of a context group) was created by the first
-- version of this change and is unchanged; a rework re-creates functions only.

CREATE OR REPLACE FUNCTION scirag.consolidation_groups(chunk_ids bigint[], options jsonb DEFAULT '{}')
RETURNS scirag.consolidation_group[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
-- Every statement that reads scirag.chunks pays for the row-level-security scope
-- (once per statement), so the rules below read chunks in whole-set statements,
-- and each group's text is rendered once and kept in `texts`.
DECLARE
  cfg jsonb := scirag.consolidation_config(options);
  thr double precision := (cfg->>'coverage_threshold')::float8;
  gap int := (cfg->>'line_gap')::int;
  minlen int := (cfg->>'min_content_length')::int;
  from_parent boolean := (cfg->>'enrich_from_parent')::boolean;
  g scirag.consolidation_group[];
  ng scirag.consolidation_group[];
  x scirag.consolidation_group;
  cur scirag.consolidation_group;
  have_cur boolean;
  r record;
  ai int;
  bi int;
  cur_le int;
  cur_hi int;
  done int[];
  changed boolean;
  iter int := 0;
  texts jsonb := '{}';     -- group key -> rendered text
  gtexts text[];           -- the texts of g, aligned with it
  chains jsonb;            -- per group: the ordinals of its enclosing sections
  k text;
  i int;
BEGIN
  PERFORM scirag.check_limit(cardinality(chunk_ids), 'the number of chunk_ids', 'scirag.consolidate');
  -- One group per readable input chunk (first occurrence), remembering its rank.
  g := ARRAY(
    SELECT ROW(c.document_id, c.parent_ordinal, ARRAY[c.ordinal], ARRAY[c.id], u.pos::int, NULL::bigint)::scirag.consolidation_group
    FROM (SELECT DISTINCT ON (t.id) t.id, t.pos
          FROM unnest(chunk_ids) WITH ORDINALITY AS t(id, pos) WHERE t.id IS NOT NULL
          ORDER BY t.id, t.pos) u
    JOIN scirag.chunks c ON c.id = u.id
    ORDER BY u.pos);
  IF cardinality(g) = 0 THEN
    RETURN g;
  END IF;

  LOOP
    iter := iter + 1;
    changed := false;

    -- 1. Containment: a group inside another group's section (or sharing a unit
    --    with it) is absorbed; its text is already there.
    SELECT jsonb_agg(coalesce(ch.chain, '[]') ORDER BY t.i) INTO chains
    FROM unnest(g) WITH ORDINALITY AS t(document_id, parent_ordinal, units, members, best, replaced_by, i)
    LEFT JOIN (
      WITH RECURSIVE up(i, doc, ord, parent, depth) AS (
        SELECT t2.i, p.document_id, p.ordinal, p.parent_ordinal, 0
        FROM unnest(g) WITH ORDINALITY AS t2(document_id, parent_ordinal, units, members, best, replaced_by, i)
        JOIN scirag.chunks p ON p.document_id = t2.document_id AND p.ordinal = t2.parent_ordinal
        UNION ALL
        SELECT up.i, p.document_id, p.ordinal, p.parent_ordinal, up.depth + 1
        FROM up JOIN scirag.chunks p ON p.document_id = up.doc AND p.ordinal = up.parent
        WHERE up.depth < 64)
      SELECT up.i, jsonb_agg(up.ord) AS chain FROM up GROUP BY up.i) ch ON ch.i = t.i;
    LOOP
      ai := NULL;
      SELECT a.i, b.i INTO ai, bi
      FROM unnest(g) WITH ORDINALITY AS a(document_id, parent_ordinal, units, members, best, replaced_by, i)
      JOIN unnest(g) WITH ORDINALITY AS b(document_id, parent_ordinal, units, members, best, replaced_by, i)
        ON b.document_id = a.document_id AND b.i <> a.i
      WHERE ARRAY(SELECT jsonb_array_elements_text(chains -> (b.i::int - 1)))::int[] && a.units
         OR (a.i < b.i AND a.units && b.units AND a.parent_ordinal IS NOT DISTINCT FROM b.parent_ordinal)
      ORDER BY a.i, b.i
      LIMIT 1;
      EXIT WHEN ai IS NULL;
      x := g[ai];
      IF x.parent_ordinal IS NOT DISTINCT FROM g[bi].parent_ordinal THEN
        x.units := ARRAY(SELECT DISTINCT v FROM unnest(x.units || g[bi].units) AS v ORDER BY v);
        IF x.units <> g[ai].units THEN
          x.replaced_by := NULL;
        END IF;
      END IF;
      x.members := x.members || g[bi].members;
      x.best := least(x.best, g[bi].best);
      g[ai] := x;
      g := g[1:bi - 1] || g[bi + 1:];
      chains := chains - (bi - 1);
      changed := true;
    END LOOP;

    -- The text of every group (rendered once per distinct group).
    gtexts := '{}';
    FOR i IN 1..cardinality(g) LOOP
      x := g[i];
      k := concat_ws(':', x.document_id, x.parent_ordinal, x.units::text);
      IF NOT texts ? k THEN
        texts := texts || jsonb_build_object(k, (scirag.consolidation_render(x, from_parent)).content);
      END IF;
      gtexts := gtexts || (texts->>k);
    END LOOP;

    -- 2. Coverage: the children of one parent that hold at least coverage_threshold
    --    of its text are replaced by the parent; deepest parents first.
    ng := '{}';
    done := '{}';
    FOR r IN
      WITH grp AS (
        SELECT t.*, gt.gtext
        FROM unnest(g) WITH ORDINALITY AS t(document_id, parent_ordinal, units, members, best, replaced_by, i)
        JOIN unnest(gtexts) WITH ORDINALITY AS gt(gtext, i) ON gt.i = t.i
        WHERE t.parent_ordinal IS NOT NULL),
      par AS (
        SELECT grp.document_id, grp.parent_ordinal, array_agg(grp.gtext) AS texts, array_agg(grp.i::int) AS idx,
               min(grp.best) AS best,
               ARRAY(SELECT DISTINCT m FROM grp g2, unnest(g2.members) AS m
                     WHERE g2.document_id = grp.document_id AND g2.parent_ordinal = grp.parent_ordinal
                     ORDER BY m) AS members
        FROM grp
        GROUP BY grp.document_id, grp.parent_ordinal),
      cov AS (
        SELECT par.*, p.id AS pid, p.level AS plevel, p.parent_ordinal AS pparent,
               length(p.body) AS plen, scirag.covered_length(p.body, par.texts) AS glen
        FROM par
        JOIN scirag.chunks p ON p.document_id = par.document_id AND p.ordinal = par.parent_ordinal
        JOIN scirag.documents d ON d.id = p.document_id),
      ok AS (
        SELECT * FROM cov WHERE cov.plen > 0 AND cov.glen::float8 / cov.plen >= thr)
      SELECT * FROM ok WHERE ok.plevel = (SELECT max(o.plevel) FROM ok o)
    LOOP
      ng := ng || ROW(r.document_id, r.pparent, ARRAY[r.parent_ordinal], r.members, r.best, r.pid)::scirag.consolidation_group;
      done := done || r.idx;
    END LOOP;
    IF cardinality(done) > 0 THEN
      g := ng || ARRAY(SELECT ROW(t.document_id, t.parent_ordinal, t.units, t.members, t.best, t.replaced_by)::scirag.consolidation_group
                       FROM unnest(g) WITH ORDINALITY AS t(document_id, parent_ordinal, units, members, best, replaced_by, i)
                       WHERE t.i <> ALL (done) ORDER BY t.i);
      CONTINUE WHEN iter < 1000;      -- settle the deeper levels before merging
    END IF;

    -- 3. Adjacent merging: siblings at most line_gap lines apart become one group.
    ng := '{}';
    have_cur := false;   -- (a composite with a NULL field is not IS NOT NULL)
    FOR r IN
      SELECT t.*, sp.ls, sp.le, sp.lo_ord, sp.hi_ord,
             EXISTS (SELECT 1 FROM scirag.chunks s
                     WHERE s.document_id = t.document_id AND s.parent_ordinal IS NOT DISTINCT FROM t.parent_ordinal
                       AND s.ordinal < sp.lo_ord
                       AND s.ordinal > (SELECT max(u2) FROM unnest(g) AS o, unnest(o.units) AS u2
                                        WHERE o.document_id = t.document_id
                                          AND o.parent_ordinal IS NOT DISTINCT FROM t.parent_ordinal
                                          AND u2 < sp.lo_ord)) AS sibling_between
      FROM unnest(g) AS t
      CROSS JOIN LATERAL (SELECT min(c.line_start) AS ls, max(c.line_end) AS le,
                                 min(c.ordinal) AS lo_ord, max(c.ordinal) AS hi_ord
                          FROM scirag.chunks c
                          WHERE c.document_id = t.document_id AND c.ordinal = ANY (t.units)) sp
      ORDER BY t.document_id, t.parent_ordinal NULLS FIRST, sp.lo_ord
    LOOP
      x := ROW(r.document_id, r.parent_ordinal, r.units, r.members, r.best, r.replaced_by)::scirag.consolidation_group;
      IF have_cur AND cur.document_id = x.document_id
         AND cur.parent_ordinal IS NOT DISTINCT FROM x.parent_ordinal
         AND (r.lo_ord <= cur_hi
              OR (cur_le IS NOT NULL AND r.ls IS NOT NULL AND r.ls - cur_le - 1 <= gap)
              OR ((cur_le IS NULL OR r.ls IS NULL) AND NOT r.sibling_between)) THEN
        cur.units := ARRAY(SELECT DISTINCT v FROM unnest(cur.units || x.units) AS v ORDER BY v);
        cur.members := cur.members || x.members;
        cur.best := least(cur.best, x.best);
        cur.replaced_by := NULL;
        cur_le := greatest(cur_le, r.le);
        cur_hi := greatest(cur_hi, r.hi_ord);
        changed := true;
      ELSE
        IF have_cur THEN
          ng := ng || cur;
        END IF;
        cur := x;
        have_cur := true;
        cur_le := r.le;
        cur_hi := r.hi_ord;
      END IF;
    END LOOP;
    g := ng || cur;
    CONTINUE WHEN changed AND iter < 1000;

    -- 4. Growth: a group shorter than min_content_length characters takes in its
    --    nearest sibling (by lines; the following one on a tie). g is unchanged
    --    since its texts were rendered.
    IF minlen > 0 THEN
      FOR r IN
        SELECT t.i, sp.ls, sp.le, pv.ordinal AS prev_ord, pv.line_end AS prev_le, nx.ordinal AS next_ord,
               nx.line_start AS next_ls
        FROM unnest(g) WITH ORDINALITY AS t(document_id, parent_ordinal, units, members, best, replaced_by, i)
        JOIN unnest(gtexts) WITH ORDINALITY AS gt(gtext, i) ON gt.i = t.i
        CROSS JOIN LATERAL (SELECT min(c.line_start) AS ls, max(c.line_end) AS le,
                                   min(c.ordinal) AS lo_ord, max(c.ordinal) AS hi_ord
                            FROM scirag.chunks c
                            WHERE c.document_id = t.document_id AND c.ordinal = ANY (t.units)) sp
        LEFT JOIN LATERAL (SELECT c.ordinal, c.line_end FROM scirag.chunks c
                           WHERE c.document_id = t.document_id AND c.parent_ordinal IS NOT DISTINCT FROM t.parent_ordinal
                             AND c.ordinal < sp.lo_ord ORDER BY c.ordinal DESC LIMIT 1) pv ON true
        LEFT JOIN LATERAL (SELECT c.ordinal, c.line_start FROM scirag.chunks c
                           WHERE c.document_id = t.document_id AND c.parent_ordinal IS NOT DISTINCT FROM t.parent_ordinal
                             AND c.ordinal > sp.hi_ord ORDER BY c.ordinal LIMIT 1) nx ON true
        WHERE gt.gtext IS NOT NULL AND length(gt.gtext) < minlen
          AND (pv.ordinal IS NOT NULL OR nx.ordinal IS NOT NULL)
      LOOP
        x := g[r.i];
        x.units := ARRAY(SELECT DISTINCT v FROM unnest(x.units || CASE
                     WHEN r.prev_ord IS NULL THEN r.next_ord
                     WHEN r.next_ord IS NULL THEN r.prev_ord
                     WHEN r.ls - r.prev_le < r.next_ls - r.le THEN r.prev_ord
                     ELSE r.next_ord END) AS v ORDER BY v);
        x.replaced_by := NULL;
        g[r.i] := x;
        changed := true;
      END LOOP;
    END IF;

    EXIT WHEN NOT changed OR iter >= 1000;
  END LOOP;
  RETURN g;
END $$;
COMMENT ON FUNCTION scirag.consolidation_groups(bigint[], jsonb) IS
  'The consolidation loop behind scirag.consolidate: containment, coverage-based replacement (deepest parents first), adjacent merging, growth of short groups, repeated to a fixed point. Returns the final groups.';

-- Declared here as the reader wall leaves it (functions/reader_wall_apply).
ALTER FUNCTION scirag.consolidation_groups(bigint[], jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.consolidation_groups(bigint[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.consolidation_groups(bigint[], jsonb) TO scirag_reader, scirag_api, scirag_loader;
GRANT USAGE ON TYPE scirag.consolidation_group TO scirag_reader, scirag_loader;
-- The safety net: the same settings for every listed API function (tests/pgtap/01_rls_sweep.sql).
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
