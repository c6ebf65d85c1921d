-- Deploy scirag:functions/search_hyde_main
-- Split (issue 28): scirag.search_hyde and scirag.hyde_passage, moved out of functions/search_hyde (sql/functions/search_hyde.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/search_hyde_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.search_hyde(query text, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, distance double precision)
LANGUAGE sql VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT scirag.check_question(query, 'scirag.search_hyde'), scirag.check_limit(n, 'n', 'scirag.search_hyde');
  SELECT v.chunk_id, v.rank, v.distance
  FROM scirag.search_vector(scirag.embed_query(scirag.hyde_passage(query)), n) AS v
$$;
COMMENT ON FUNCTION scirag.search_hyde(text, integer) IS
  'HyDE layer: embeds the probe passage for the question as a document and returns the n nearest chunks in the caller''s scope. A question over 4,000 characters or n over 1,000 is refused (SQLSTATE 22023).';

CREATE OR REPLACE FUNCTION scirag.hyde_passage(query text)
RETURNS text
LANGUAGE plpython3u
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
# The passage is a search probe only: callers must never show or cite it.
import json
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.hyde import hyde_passage
row = plpy.execute("SELECT value FROM scirag.settings WHERE key = 'hyde_styles'")
styles = json.loads(row[0]['value']) if row else {}
passage, method = hyde_passage(plpy, query or '', styles)
GD['scirag_hyde_method'] = method
return passage
$$;
COMMENT ON FUNCTION scirag.hyde_passage(text) IS
  'HyDE probe passage for a question: written by the configured model, or offline by pseudo-relevance feedback from the caller''s top keyword hits. Never shown or cited.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.search_hyde(text, integer) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.search_hyde(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.search_hyde(text, integer) TO scirag_loader, scirag_reader;
ALTER FUNCTION scirag.hyde_passage(text) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.hyde_passage(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.hyde_passage(text) TO scirag_loader, scirag_reader;
COMMIT;
