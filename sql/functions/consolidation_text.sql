-- Deploy scirag:functions/consolidation_text
-- Split (issue 28): scirag.join_overlapping, scirag.covered_length, moved out of functions/consolidate (as sql/functions/consolidate@v1.3.sql defines
-- it; the rework after @v1.3 now holds consolidation_groups only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/consolidation_text` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.join_overlapping(a text, b text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  p int;
BEGIN
  IF coalesce(a, '') = '' THEN RETURN b; END IF;
  IF coalesce(b, '') = '' THEN RETURN a; END IF;
  -- The loader starts a prose chunk with the last sentences of the one before it:
  -- find the longest such carry (ending at a word boundary) and keep one copy.
  FOR p IN SELECT x FROM generate_series(least(length(a), length(b), 4000) + 1, 21, -1) AS x
           WHERE x > length(b) OR substr(b, x, 1) ~ '\s' LOOP
    IF right(a, p - 1) = left(b, p - 1) THEN
      RETURN a || substr(b, p);
    END IF;
  END LOOP;
  RETURN a || E'\n\n' || b;
END $$;
COMMENT ON FUNCTION scirag.join_overlapping(text, text) IS
  'Joins two consecutive chunk texts, keeping one copy of the overlap the second carries from the first (at least 20 characters, on a word boundary); otherwise a paragraph break.';

CREATE OR REPLACE FUNCTION scirag.covered_length(parent_body text, texts text[])
RETURNS int
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  t text;
  loc int[];
  starts int[] := '{}';
  ends int[] := '{}';
  extra int := 0;
  total int := 0;
  cur_s int;
  cur_e int;
  r record;
BEGIN
  -- Characters of the parent the texts cover, each character once: consecutive
  -- chunks overlap (the loader carries sentences over), so lengths do not add up.
  FOREACH t IN ARRAY coalesce(texts, '{}') LOOP
    loc := scirag.locate_text(parent_body, t);
    IF loc IS NULL THEN
      extra := extra + coalesce(length(t), 0);   -- not found: counted as it is
    ELSE
      starts := starts || loc[1];
      ends := ends || loc[2];
    END IF;
  END LOOP;
  FOR r IN SELECT s, e FROM unnest(starts, ends) AS u(s, e) ORDER BY s LOOP
    IF cur_s IS NULL OR r.s > cur_e THEN
      total := total + coalesce(cur_e - cur_s, 0);
      cur_s := r.s;
      cur_e := r.e;
    ELSE
      cur_e := greatest(cur_e, r.e);
    END IF;
  END LOOP;
  RETURN total + coalesce(cur_e - cur_s, 0) + extra;
END $$;
COMMENT ON FUNCTION scirag.covered_length(text, text[]) IS
  'How many characters of a parent''s text the given texts cover, overlaps counted once (a text not found in the parent counts its own length).';

REVOKE ALL ON FUNCTION scirag.join_overlapping(text, text), scirag.covered_length(text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.join_overlapping(text, text), scirag.covered_length(text, text[]) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
