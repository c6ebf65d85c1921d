-- Deploy scirag:functions/breadcrumb
-- Split (issue 28): scirag.breadcrumb, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/breadcrumb` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.breadcrumb(title text, section_path text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Documents often open with their title as a top heading: say it once.
  SELECT nullif(CASE WHEN section_path = title THEN ''
                     WHEN starts_with(section_path, title || ' > ') THEN substr(section_path, length(title) + 4)
                     ELSE section_path END, '')
$$;
COMMENT ON FUNCTION scirag.breadcrumb(text, text) IS
  'Section path without a leading heading that repeats the document title (NULL when nothing is left).';

REVOKE ALL ON FUNCTION scirag.breadcrumb(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.breadcrumb(text, text) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
