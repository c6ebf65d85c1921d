-- Deploy scirag:functions/embed_main
-- Split (issue 28): scirag.embed_query and scirag.plpy_bootstrap, moved out of functions/embed (sql/functions/embed.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/embed_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.embed_query(query text)
RETURNS vector
LANGUAGE plpython3u STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.embedder import embed_query
return embed_query(plpy, GD, query or '')
$$;
COMMENT ON FUNCTION scirag.embed_query(text) IS
  'Embeds a query with the corpus embedder (model loaded once per backend; a short cache keyed by the caller and a hash of the text). Agrees with the loader to cosine >= 0.9999.';

CREATE OR REPLACE FUNCTION scirag.plpy_bootstrap()
RETURNS void
LANGUAGE plpython3u
SECURITY DEFINER
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

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.embed_query(text) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.embed_query(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.embed_query(text) TO scirag_loader, scirag_reader;
ALTER FUNCTION scirag.plpy_bootstrap() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.plpy_bootstrap() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.plpy_bootstrap() TO scirag_loader, scirag_reader;
COMMIT;
