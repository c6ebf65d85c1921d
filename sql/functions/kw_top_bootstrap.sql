-- Deploy scirag:functions/kw_top_bootstrap
-- A shorter walk of one answer (issue 28): scirag.kw_top calls scirag.plpy_bootstrap()
-- only when this backend has not run it yet (its GD flag scirag_path_ready, which
-- plpy_bootstrap itself checks first), instead of a SQL round trip into a second
-- PL/Python function on every call. Otherwise unchanged from kw_top.sql
-- (change functions/kw_top); its revert re-creates that version.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.kw_top(lexemes text[], idf double precision[], k1 double precision,
                                         b double precision, avgdl double precision, n int,
                                         phrase_q tsquery, neg_q tsquery, refs boolean)
RETURNS TABLE (chunk_id bigint, score double precision)
LANGUAGE plpython3u STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
# STABLE matters: every statement inside sees the calling query's snapshot, so the
# blocks bm25.top_n lists and then reads by ctid are the same rows.
if not GD.get('scirag_path_ready'):  # set by plpy_bootstrap, once per backend
    plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.bm25 import top_n
if not lexemes or not n or n <= 0:
    return []
top = top_n(plpy, GD, lexemes, idf, k1, b, avgdl, n, phrase_q, neg_q, bool(refs))
if top is None:
    # chunk ids spread too wide for the dense accumulators: the same ranking in PL/pgSQL
    plan = GD.get('scirag_kw_top_sql') or GD.setdefault('scirag_kw_top_sql', plpy.prepare(
        'SELECT chunk_id, score FROM scirag.kw_top_sql($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        ['text[]', 'float8[]', 'float8', 'float8', 'float8', 'int', 'tsquery', 'tsquery', 'boolean']))
    return [(r['chunk_id'], r['score']) for r in plan.execute([lexemes, idf, k1, b, avgdl, n, phrase_q, neg_q, refs])]
return top
$$;
COMMENT ON FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) IS
  'Exact BM25 top n of search_keyword (scirag_helpers/bm25.py): block-max pruning over kw_blocks.packed and fresh kw_postings, candidates checked and scored against scirag.chunks as the caller sees them. Internal: runs inside search_keyword (as scirag_api); readers may not call it.';

REVOKE ALL ON FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) TO scirag_api, scirag_loader;
COMMIT;
