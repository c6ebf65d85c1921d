-- Deploy scirag:functions/embed_query_bootstrap
-- A shorter walk of one answer (issue 28): scirag.embed_query calls scirag.plpy_bootstrap()
-- only when this backend has not run it yet (its GD flag scirag_path_ready, which
-- plpy_bootstrap itself checks first), instead of a SQL round trip into a second
-- PL/Python function on every call. Otherwise unchanged from embed_main.sql
-- (change functions/embed_main); its revert re-creates that version.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.embed_query(query text)
RETURNS vector
LANGUAGE plpython3u STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
if not GD.get('scirag_path_ready'):  # set by plpy_bootstrap, once per backend
    plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.embedder import embed_query
return embed_query(plpy, GD, query or '')
$$;
COMMENT ON FUNCTION scirag.embed_query(text) IS
  'Embeds a query with the corpus embedder (model loaded once per backend; a short cache keyed by the caller and a hash of the text). Agrees with the loader to cosine >= 0.9999.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.embed_query(text) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.embed_query(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.embed_query(text) TO scirag_loader, scirag_reader;
COMMIT;
