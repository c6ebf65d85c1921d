-- Deploy scirag:functions/embed
-- Query embedding inside PostgreSQL, with the same Python the loader uses.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.plpy_bootstrap()
RETURNS void
LANGUAGE plpython3u
SET search_path = pg_catalog, pg_temp
AS $$
# Once per backend (GD guard): put the folders named by the admin-only setting
# scirag.settings.python_path on sys.path. A session setting would let any
# client point an untrusted language at code of its choosing, so none is read.
if GD.get('scirag_path_ready'):
    return
import site, sys
row = plpy.execute("SELECT value FROM scirag.settings WHERE key = 'python_path'")
folders = [p for p in (row[0]['value'] if row else '').split(':') if p]
if not folders:
    plpy.error('scirag.settings.python_path is empty',
               hint='run "scirag db init" so the server can import the embedding model')
for p in folders:
    if p not in sys.path:
        site.addsitedir(p)
GD['scirag_path_ready'] = True
$$;
COMMENT ON FUNCTION scirag.plpy_bootstrap() IS
  'Makes the venv site-packages and python/plpy_helpers importable in this backend (once).';

CREATE OR REPLACE FUNCTION scirag.embed_query(query text)
RETURNS vector
LANGUAGE plpython3u STABLE
SET search_path = pg_catalog, pg_temp
AS $$
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.embedder import embed_query
return embed_query(plpy, GD, query or '')
$$;
COMMENT ON FUNCTION scirag.embed_query(text) IS
  'Embeds a query with the corpus embedder (model loaded once per backend; a short cache keyed by a hash of the text). Agrees with the loader to cosine >= 0.9999.';

GRANT EXECUTE ON FUNCTION scirag.plpy_bootstrap(), scirag.embed_query(text) TO scirag_reader, scirag_loader;
COMMIT;
