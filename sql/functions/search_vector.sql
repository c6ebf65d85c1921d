-- Deploy scirag:functions/search_vector
BEGIN;
CREATE OR REPLACE FUNCTION scirag.search_vector(query_embedding public.vector, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, distance double precision)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
-- Iterative index scans (pgvector 0.8) keep reading the HNSW graph until n rows
-- pass the row-level-security filter, so a narrow scope still gets n rows.
-- relaxed_order can return rows slightly out of order: re-sorted below.
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 200
AS $$
  WITH hits AS MATERIALIZED (
    SELECT c.id, c.embedding OPERATOR(public.<=>) query_embedding AS d
    FROM scirag.chunks c
    WHERE c.embedding IS NOT NULL
    ORDER BY c.embedding OPERATOR(public.<=>) query_embedding
    LIMIT n)
  SELECT id, (row_number() OVER (ORDER BY d, id))::int, d FROM hits ORDER BY d, id
$$;
COMMENT ON FUNCTION scirag.search_vector(public.vector, int) IS
  'Dense layer: the n nearest chunks by cosine distance (HNSW), inside the caller''s scope.';
GRANT EXECUTE ON FUNCTION scirag.search_vector(public.vector, int) TO scirag_reader, scirag_loader;
COMMIT;
