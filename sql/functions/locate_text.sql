-- Deploy scirag:functions/locate_text
-- Split (issue 28): scirag.locate_text, moved out of functions/deep_text (sql/functions/deep_text.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/locate_text` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.locate_text(haystack text, needle text, from_pos int DEFAULT 1)
RETURNS int[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  n text := btrim(needle, E' \t\r\n');
  p int;
  words text[];
  nw int;
  pat_head text;
  pat_tail text;
  s int;
  e int;
  tail_len int;
BEGIN
  IF n IS NULL OR n = '' OR haystack IS NULL OR from_pos < 1 THEN
    RETURN NULL;
  END IF;
  p := strpos(substr(haystack, from_pos), n);
  IF p > 0 THEN
    RETURN ARRAY[from_pos + p - 1, from_pos + p - 1 + length(n)];
  END IF;
  -- Not verbatim: a paragraph split into sentence pieces is re-joined with single
  -- spaces where the parent keeps line breaks. Match on words, any whitespace
  -- between them: the first 12 words give the start, the last 12 the end.
  words := regexp_split_to_array(n, '\s+');
  nw := cardinality(words);
  pat_head := array_to_string(ARRAY(
    SELECT regexp_replace(w, '([^[:alnum:]])', '\\\1', 'g') FROM unnest(words[1:least(12, nw)]) AS w), '\s+');
  s := regexp_instr(haystack, pat_head, from_pos);
  IF s = 0 THEN
    RETURN NULL;
  END IF;
  IF nw <= 12 THEN
    RETURN ARRAY[s, regexp_instr(haystack, pat_head, s, 1, 1)];
  END IF;
  pat_tail := array_to_string(ARRAY(
    SELECT regexp_replace(w, '([^[:alnum:]])', '\\\1', 'g') FROM unnest(words[nw - 11:nw]) AS w), '\s+');
  tail_len := length(array_to_string(words[nw - 11:nw], ' '));
  -- Start the tail search past half of the text before it, so that a phrase the
  -- needle repeats cannot end the match early.
  e := regexp_instr(haystack, pat_tail, s + greatest(0, (length(n) - tail_len) / 2), 1, 1);
  IF e = 0 OR e - s < length(n) / 2 OR e - s > length(n) * 2 THEN
    RETURN NULL;
  END IF;
  RETURN ARRAY[s, e];
END $$;
COMMENT ON FUNCTION scirag.locate_text(text, text, int) IS
  'Where needle occurs in haystack at or after from_pos, as {start, end} character positions (1-based, end exclusive), ignoring differences in whitespace; NULL when absent.';

REVOKE ALL ON FUNCTION scirag.locate_text(text, text, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.locate_text(text, text, int) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
