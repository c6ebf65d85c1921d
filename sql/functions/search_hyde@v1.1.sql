-- Deploy scirag:functions/search_hyde
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
  SELECT v.chunk_id, v.rank, v.distance
  FROM scirag.search_vector(scirag.embed_query(scirag.hyde_passage(query)), n) AS v
$$;
COMMENT ON FUNCTION scirag.search_hyde(text, int) IS
  'HyDE layer: embeds the probe passage for the question as a document and returns the n nearest chunks in the caller''s scope.';
GRANT EXECUTE ON FUNCTION scirag.hyde_passage(text), scirag.search_hyde(text, int) TO scirag_reader, scirag_loader;
COMMIT;
