-- Deploy scirag:functions/search_hyde
-- The HyDE layer. Reworked (issue 13): called on its own (not through retrieve) it
-- refuses a question over 4,000 characters and n over 1,000 with SQLSTATE 22023
-- (scirag.check_question, scirag.check_limit) before the question reaches Python.
BEGIN;
INSERT INTO scirag.settings (key, value, description) VALUES
  ('hyde_styles', '{}', 'JSON object: query class -> passage style the HyDE model is asked to write in (from domain.yaml query_classes)')
ON CONFLICT (key) DO NOTHING;

CREATE OR REPLACE FUNCTION scirag.hyde_passage(query text)
RETURNS text
LANGUAGE plpython3u
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

CREATE OR REPLACE FUNCTION scirag.search_hyde(query text, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, distance double precision)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT scirag.check_question(query, 'scirag.search_hyde'), scirag.check_limit(n, 'n', 'scirag.search_hyde');
  SELECT v.chunk_id, v.rank, v.distance
  FROM scirag.search_vector(scirag.embed_query(scirag.hyde_passage(query)), n) AS v
$$;
COMMENT ON FUNCTION scirag.search_hyde(text, int) IS
  'HyDE layer: embeds the probe passage for the question as a document and returns the n nearest chunks in the caller''s scope. A question over 4,000 characters or n over 1,000 is refused (SQLSTATE 22023).';
GRANT EXECUTE ON FUNCTION scirag.hyde_passage(text), scirag.search_hyde(text, int) TO scirag_reader, scirag_loader;
COMMIT;
