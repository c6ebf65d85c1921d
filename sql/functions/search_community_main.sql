-- Deploy scirag:functions/search_community_main
-- Split (issue 28): scirag.search_community and scirag.search_community_chunks, moved out of functions/search_community (sql/functions/search_community.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/search_community_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.search_community(query_embedding public.vector, n int DEFAULT 10)
RETURNS TABLE (community_id bigint, rank int, distance double precision, summary text, document_ids bigint[])
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- as every layer: on a stock server (jit = on) compiling this statement would cost
-- more than running it
SET jit = off
AS $$
  SELECT scirag.check_limit(n, 'n', 'scirag.search_community');
  WITH vis AS MATERIALIZED (
    SELECT k.id, k.tier, k.summary, k.source_documents, k.embedding
    FROM scirag.kg_communities k
    WHERE k.embedding IS NOT NULL AND query_embedding IS NOT NULL AND coalesce(n, 0) > 0
      AND NOT scirag.scope_is_empty()),
  hits AS (
    SELECT v.id, v.embedding OPERATOR(public.<=>) query_embedding AS d, v.summary, v.source_documents
    FROM vis v
    WHERE v.tier = (SELECT max(v2.tier) FROM vis v2)
    ORDER BY 2, 1
    LIMIT greatest(n, 0))
  SELECT h.id, (row_number() OVER (ORDER BY h.d, h.id))::int, h.d, h.summary, h.source_documents
  FROM hits h ORDER BY h.d, h.id
$$;
COMMENT ON FUNCTION scirag.search_community(public.vector, integer) IS
  'Community layer: the n community summaries nearest the query embedding (cosine), among those whose every source document is in the caller''s scope (row-level security), from the broadest license tier the caller can see. n over 1,000 is refused (SQLSTATE 22023).';

CREATE OR REPLACE FUNCTION scirag.search_community_chunks(query_embedding public.vector, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- as every layer: on a stock server (jit = on) compiling this statement would cost
-- more than running it
SET jit = off
AS $$
  SELECT scirag.check_limit(n, 'n', 'scirag.search_community_chunks');
  -- The evidence chunks of the best-matching visible communities, for fusion:
  -- community rank first, then the chunk's own distance to the query. Chunks
  -- are read under row-level security (kg_community_chunks and chunks).
  WITH top AS (
    SELECT s.community_id, s.rank
    FROM scirag.search_community(query_embedding,
                                 scirag.graph_option_int('community_top', 3, 1, 50)) s),
  ev AS (
    SELECT DISTINCT ON (cc.chunk_id) cc.chunk_id, t.rank AS crank,
           c.embedding OPERATOR(public.<=>) query_embedding AS d
    FROM top t
    JOIN scirag.kg_community_chunks cc ON cc.community_id = t.community_id
    JOIN scirag.chunks c ON c.id = cc.chunk_id
    WHERE c.embedding IS NOT NULL
    ORDER BY cc.chunk_id, t.rank)
  SELECT ev.chunk_id, (row_number() OVER (ORDER BY ev.crank, ev.d, ev.chunk_id))::int
  FROM ev
  ORDER BY ev.crank, ev.d, ev.chunk_id
  LIMIT greatest(coalesce(n, 0), 0)
$$;
COMMENT ON FUNCTION scirag.search_community_chunks(public.vector, integer) IS
  'Community layer for fusion: evidence chunks of the best-matching visible communities (graph option community_top), ranked by community rank, then by the chunk''s cosine distance to the query. n over 1,000 is refused (SQLSTATE 22023).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.search_community(public.vector, integer) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.search_community(public.vector, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.search_community(public.vector, integer) TO scirag_loader, scirag_reader;
ALTER FUNCTION scirag.search_community_chunks(public.vector, integer) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.search_community_chunks(public.vector, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.search_community_chunks(public.vector, integer) TO scirag_loader, scirag_reader;
COMMIT;
