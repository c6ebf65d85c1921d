-- Revert scirag:functions/search_vector to its @v1.0 version
BEGIN;
CREATE OR REPLACE FUNCTION scirag.search_vector(query_embedding public.vector, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
-- Iterative index scans (pgvector 0.8) keep reading the HNSW graph until n rows
-- pass the row-level-security filter, so a narrow scope still gets n rows.
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 200
-- Under row-level security the planner prices the HNSW scan above a sequential
-- scan plus sort on small and mid-sized tables (65 ms instead of a few ms at 5k
-- chunks): the index is always the right plan for ORDER BY distance LIMIT n.
SET enable_seqscan = off
AS $$
DECLARE
  ids bigint[];
  dists double precision[];
BEGIN
  -- EXECUTE plans with the actual vector and n: a generic plan (what a SQL function
  -- body gets) does not know LIMIT n is small and may sort the whole table instead
  -- of walking the HNSW index.
  EXECUTE 'SELECT array_agg(h.id), array_agg(h.d) FROM (
             SELECT c.id, c.embedding OPERATOR(public.<=>) $1 AS d
             FROM scirag.chunks c
             WHERE c.embedding IS NOT NULL
             ORDER BY c.embedding OPERATOR(public.<=>) $1
             LIMIT $2) h'
    INTO ids, dists USING query_embedding, n;
  IF coalesce(cardinality(ids), 0) < n THEN
    -- The iterative scan stops at hnsw.max_scan_tuples; when a very narrow scope
    -- (or dead index entries) leaves it short, rank exactly instead: "+ 0" keeps
    -- the planner off the index, so every eligible row is considered.
    EXECUTE 'SELECT array_agg(h.id), array_agg(h.d) FROM (
               SELECT c.id, c.embedding OPERATOR(public.<=>) $1 AS d
               FROM scirag.chunks c
               WHERE c.embedding IS NOT NULL
               ORDER BY (c.embedding OPERATOR(public.<=>) $1) + 0
               LIMIT $2) h'
      INTO ids, dists USING query_embedding, n;
  END IF;
  -- relaxed_order may return rows slightly out of order: rank by distance here
  RETURN QUERY
    SELECT u.id, (row_number() OVER (ORDER BY u.d, u.id))::int, u.d
    FROM unnest(ids, dists) AS u(id, d)
    ORDER BY u.d, u.id;
END $$;
COMMENT ON FUNCTION scirag.search_vector(public.vector, int) IS
  'Dense layer: the n nearest chunks by cosine distance (HNSW), inside the caller''s scope.';
GRANT EXECUTE ON FUNCTION scirag.search_vector(public.vector, int) TO scirag_reader, scirag_loader;
COMMIT;
