-- Deploy scirag:functions/fuse_rrf
BEGIN;
CREATE TYPE scirag.layer_hit AS (layer text, chunk_id bigint, rank int);
COMMENT ON TYPE scirag.layer_hit IS 'One candidate from one retrieval layer: the layer, the chunk, its 1-based rank in that layer';

CREATE OR REPLACE FUNCTION scirag.default_rrf_weights()
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT '{"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}'::jsonb $$;
COMMENT ON FUNCTION scirag.default_rrf_weights() IS 'Default fusion weights per layer (DESIGN.md section 8)';

CREATE OR REPLACE FUNCTION scirag.fuse_rrf(hits scirag.layer_hit[], weights jsonb DEFAULT '{}', rrf_k int DEFAULT 60)
RETURNS TABLE (chunk_id bigint, score double precision, layers jsonb)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- score(c) = sum over layers of weight(layer) / (rrf_k + rank of c in layer).
  -- Ranks, not native scores: cosine distances and BM25 scores are not comparable.
  -- A layer with no weight (neither default nor given) does not count.
  WITH w AS (SELECT key AS layer, value::float8 AS weight
             FROM jsonb_each_text(scirag.default_rrf_weights() || coalesce(weights, '{}')))
  SELECT h.chunk_id, sum(w.weight / (rrf_k + h.rank)), jsonb_object_agg(h.layer, h.rank)
  FROM unnest(hits) AS h JOIN w ON w.layer = h.layer
  GROUP BY h.chunk_id
  ORDER BY 2 DESC, 1
$$;
COMMENT ON FUNCTION scirag.fuse_rrf(scirag.layer_hit[], jsonb, int) IS
  'Weighted reciprocal-rank fusion (k = 60 by default): the one implementation every caller uses. Returns chunks by fused score with the rank each layer gave them.';
GRANT EXECUTE ON FUNCTION scirag.default_rrf_weights(), scirag.fuse_rrf(scirag.layer_hit[], jsonb, int)
  TO scirag_reader, scirag_loader;
COMMIT;
