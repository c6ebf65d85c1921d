-- Deploy scirag:functions/text_blocks
-- Split (issue 28): scirag.text_blocks, moved out of functions/deep_text (sql/functions/deep_text.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/text_blocks` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.text_blocks(t text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  blocks text[] := '{}';
  sup text;
BEGIN
  -- substr(t, i, n) costs O(i) for a multi-byte encoding (it copies and walks the
  -- prefix); cut once into 1024-character blocks (through 32768-character pieces, so
  -- that the cutting itself stays near-linear). A caller then reads substr(t, a, n)
  -- from the blocks it spans, by element (blocks[i]), in O(n + 1024). Written inline:
  -- passing the array to a function, or slicing it (blocks[i:j]), copies the whole
  -- array on every call, which is the quadratic cost again.
  FOR i IN 0 .. (greatest(length(t), 1) - 1) / 32768 LOOP
    sup := substr(t, i * 32768 + 1, 32768);
    FOR j IN 0 .. (greatest(length(sup), 1) - 1) / 1024 LOOP
      blocks := blocks || substr(sup, j * 1024 + 1, 1024);
    END LOOP;
  END LOOP;
  RETURN blocks;
END $$;
COMMENT ON FUNCTION scirag.text_blocks(text) IS
  'A text cut into 1024-character blocks, so that text_units and window_text read any substring in time linear in its length.';

REVOKE ALL ON FUNCTION scirag.text_blocks(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.text_blocks(text) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
