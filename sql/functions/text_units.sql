-- Deploy scirag:functions/text_units
-- Split (issue 28): scirag.text_units, moved out of functions/deep_text (sql/functions/deep_text.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/text_units` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.text_units(body text, headings text[] DEFAULT '{}')
RETURNS TABLE (unit_no int, para_no int, s int, e int, words int, is_heading boolean)
LANGUAGE plpython3u IMMUTABLE PARALLEL RESTRICTED
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
# The length bound is checked before any import or text work.
if body is not None and len(body) > 2000000:
    plpy.error(f"scirag.text_units: the body is {len(body)} characters long, at most 2000000 allowed",
               sqlstate="22023")
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.text import units
# Python offsets are 0-based; SQL positions 1-based (e exclusive in both).
return [(u.unit_no, u.para_no, u.start + 1, u.end + 1, u.words, u.is_heading)
        for u in units(body or '', headings or ())]
$$;
COMMENT ON FUNCTION scirag.text_units(text, text[]) IS
  'Splits a chunk body into the units the sliding window keeps or drops: heading paragraphs (listed in headings, or markdown #), table rows, and prose sentences (scirag_helpers.text.units, the loader''s splitter). Positions are 1-based, e exclusive; bodies over 2,000,000 characters are refused (22023).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.text_units(text, text[]) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.text_units(text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.text_units(text, text[]) TO scirag_reader, scirag_loader;
COMMIT;
