-- Deploy scirag:functions/chunk_body
-- Split (issue 28): scirag.chunk_body, moved out of functions/deep_text (sql/functions/deep_text.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/chunk_body` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.chunk_body(content text, title text, section_path text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- The loader prepends "title\nsection path\n\n" (the path without a leading
  -- copy of the title) to every chunk; enrichment and consolidation measure and
  -- join the text itself, not the repeated prefix.
  WITH h AS (
    SELECT concat_ws(E'\n', nullif(btrim(title), ''),
             nullif(CASE WHEN btrim(title) <> ''
                          AND (section_path = btrim(title) OR starts_with(section_path, btrim(title) || ' > '))
                         THEN substr(section_path, length(btrim(title)) + 4)
                         ELSE section_path END, '')) AS head)
  SELECT CASE WHEN h.head <> '' AND starts_with(content, h.head || E'\n\n')
              THEN substr(content, length(h.head) + 3)
              ELSE content END
  FROM h
$$;
COMMENT ON FUNCTION scirag.chunk_body(text, text, text) IS
  'The rule that filled chunks.body for rows written without it (schema/chunk_body): a chunk''s content without the "title / section path" prefix the loader prepends (the content itself when the prefix does not match). Readers use chunks.body.';

REVOKE ALL ON FUNCTION scirag.chunk_body(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.chunk_body(text, text, text) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
