-- Deploy scirag:functions/word_count
-- Split (issue 28): scirag.word_count, moved out of functions/deep_text (sql/functions/deep_text.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/word_count` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.word_count(t text)
RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- A word is a whitespace-separated token holding a letter or digit: table rules
  -- ("|"), dashes and omission marks do not count.
  SELECT coalesce(regexp_count(t, '\S*\w\S*'), 0)
$$;
COMMENT ON FUNCTION scirag.word_count(text) IS
  'Words in a text: whitespace-separated tokens that contain a letter or digit (the unit of min_word_count / max_word_count).';

REVOKE ALL ON FUNCTION scirag.word_count(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.word_count(text) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
