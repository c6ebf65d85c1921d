-- Deploy scirag:functions/search_vector
BEGIN;
CREATE OR REPLACE FUNCTION scirag.search_vector(query_embedding public.vector, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
-- Iterative index scans (pgvector 0.8) keep reading the HNSW graph until n rows
-- pass the row-level-security filter, so a narrow scope still gets n rows.
-- relaxed_order can return rows slightly out of order: re-sorted below.
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 200
-- Under row-level security the planner prices the HNSW scan above a sequential
-- scan plus sort on small and mid-sized tables (65 ms instead of a few ms at 5k
-- chunks): the index is always the right plan for ORDER BY distance LIMIT n.
SET enable_seqscan = off
AS $$
BEGIN
  -- EXECUTE plans with the actual vector and n: a generic plan (what a SQL function
  -- body gets) does not know LIMIT n is small and may sort the whole table instead
  -- of walking the HNSW index.
  RETURN QUERY EXECUTE
    'WITH hits AS MATERIALIZED (
       SELECT c.id, c.embedding OPERATOR(public.<=>) $1 AS d
       FROM scirag.chunks c
       WHERE c.embedding IS NOT NULL
       ORDER BY c.embedding OPERATOR(public.<=>) $1
       LIMIT $2)
     SELECT id, (row_number() OVER (ORDER BY d, id))::int, d FROM hits ORDER BY d, id'
    USING query_embedding, n;
END $$;
COMMENT ON FUNCTION scirag.search_vector(public.vector, int) IS
  'Dense layer: the n nearest chunks by cosine distance (HNSW), inside the caller''s scope.';
GRANT EXECUTE ON FUNCTION scirag.search_vector(public.vector, int) TO scirag_reader, scirag_loader;
COMMIT;
