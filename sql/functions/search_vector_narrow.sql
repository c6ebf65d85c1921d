-- Deploy scirag:functions/search_vector_narrow
-- A question asked of a few papers (the positive scope filters admit at most 1,000
-- chunks: scirag.scope_narrow_documents()) is ranked exactly over those papers' chunks,
-- found through the chunks_document index, instead of by HNSW's iterative scan over
-- the whole corpus: a paper of 30 chunks among 9,000 left the scan short of n and it
-- read on to hnsw.max_scan_tuples and then ranked every visible row exactly anyway
-- (25-36 ms; now under 1 ms). Otherwise unchanged from search_vector_main.sql (change
-- functions/search_vector_main); its revert re-creates that version.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.search_vector(query_embedding public.vector, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, distance double precision)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Iterative index scans (pgvector 0.8) keep reading the HNSW graph until n rows
-- pass the row-level-security filter, so a narrow scope still gets n rows.
SET hnsw.iterative_scan = 'relaxed_order'
SET hnsw.ef_search = 200
-- JIT is off for everything this function runs, the scope functions that row-level
-- security calls included: v1.0 set enable_seqscan = off on the function, which
-- priced their scans at 10^10, and a stock server (jit = on) then JIT-compiled each of
-- them, 50-90 ms apiece. Nothing in this layer is big enough to repay compiling.
SET jit = off
AS $$
DECLARE
  ids bigint[];
  dists double precision[];
  seqscan text;
  narrow bigint[] := scirag.scope_narrow_documents();
  -- chunks of a paper's reference list stay out unless the session asks for them
  refs boolean := coalesce(lower(btrim(current_setting('scirag.include_references', true))) IN ('on', 'true', '1', 'yes'), false);
BEGIN
  -- called directly (not only through retrieve), n is bounded as for every layer
  PERFORM scirag.check_limit(n, 'n', 'scirag.search_vector');
  IF narrow IS NOT NULL THEN
    -- few admitted chunks: every one of them, ranked exactly ("+ 0" keeps the planner
    -- off the HNSW index; the document condition restates the restrictive policy so
    -- that the planner can use chunks_document)
    EXECUTE 'SELECT array_agg(h.id), array_agg(h.d) FROM (
               SELECT c.id, c.embedding OPERATOR(public.<=>) $1 AS d
               FROM scirag.chunks c
               WHERE c.document_id = ANY ($4) AND c.embedding IS NOT NULL AND ($3 OR NOT c.is_reference)
               ORDER BY (c.embedding OPERATOR(public.<=>) $1) + 0
               LIMIT $2) h'
      INTO ids, dists USING query_embedding, n, refs, narrow;
  ELSE
    -- EXECUTE plans with the actual vector and n: a generic plan (what a SQL function
    -- body gets) does not know LIMIT n is small and may sort the whole table instead
    -- of walking the HNSW index. Under row-level security the planner cannot know how
    -- many rows the scope keeps (its quals compare with arrays computed at run time)
    -- and often prices a sequential scan plus sort below the walk (65 ms instead of a
    -- few at 5k chunks); the walk is always the right plan for ORDER BY distance LIMIT
    -- n, so sequential scans are ruled out for this one statement only, and the
    -- caller's setting is back before anything else runs (an error undoes it too).
    seqscan := current_setting('enable_seqscan');
    PERFORM set_config('enable_seqscan', 'off', true);
    EXECUTE 'SELECT array_agg(h.id), array_agg(h.d) FROM (
               SELECT c.id, c.embedding OPERATOR(public.<=>) $1 AS d
               FROM scirag.chunks c
               WHERE c.embedding IS NOT NULL AND ($3 OR NOT c.is_reference)
               ORDER BY c.embedding OPERATOR(public.<=>) $1
               LIMIT $2) h'
      INTO ids, dists USING query_embedding, n, refs;
    PERFORM set_config('enable_seqscan', seqscan, true);
    IF coalesce(cardinality(ids), 0) < n THEN
      -- The iterative scan stops at hnsw.max_scan_tuples; when a very narrow scope
      -- (or dead index entries) leaves it short, rank exactly instead: "+ 0" keeps
      -- the planner off the index, so every eligible row is considered.
      EXECUTE 'SELECT array_agg(h.id), array_agg(h.d) FROM (
                 SELECT c.id, c.embedding OPERATOR(public.<=>) $1 AS d
                 FROM scirag.chunks c
                 WHERE c.embedding IS NOT NULL AND ($3 OR NOT c.is_reference)
                 ORDER BY (c.embedding OPERATOR(public.<=>) $1) + 0
                 LIMIT $2) h'
        INTO ids, dists USING query_embedding, n, refs;
    END IF;
  END IF;
  -- relaxed_order may return rows slightly out of order: rank by distance here (the
  -- narrow path's order is exact already)
  RETURN QUERY
    SELECT u.id, (row_number() OVER (ORDER BY u.d, u.id))::int, u.d
    FROM unnest(ids, dists) AS u(id, d)
    ORDER BY u.d, u.id;
END $$;
COMMENT ON FUNCTION scirag.search_vector(public.vector, integer) IS
  'Dense layer: the n nearest chunks by cosine distance (HNSW; exact over the admitted chunks when the positive scope filters admit at most 1,000), inside the caller''s scope; reference-list chunks only with scirag.include_references on; n over 1,000 is refused (SQLSTATE 22023).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.search_vector(public.vector, integer) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.search_vector(public.vector, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.search_vector(public.vector, integer) TO scirag_loader, scirag_reader;
COMMIT;
