-- Deploy scirag:functions/fuse_rrf
BEGIN;
CREATE TYPE scirag.layer_hit AS (layer text, chunk_id bigint, rank int, score double precision);
COMMENT ON TYPE scirag.layer_hit IS 'One candidate from one retrieval layer: the layer, the chunk, its 1-based rank in that layer and the layer''s own score (higher is better; NULL when the layer has none)';

CREATE OR REPLACE FUNCTION scirag.default_rrf_weights()
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT '{"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}'::jsonb $$;
COMMENT ON FUNCTION scirag.default_rrf_weights() IS 'Default weighted-RRF weights per layer (DESIGN.md section 8)';

CREATE OR REPLACE FUNCTION scirag.default_score_weights()
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
-- RRF weights do not carry over: they scale 1/(k + rank), these scale a [0, 1] share of a
-- layer's score range. Keyword outweighs vector (the SciFact and SciTab ablation, README);
-- the graph, community and HyDE layers are supporting evidence, not equals.
AS $$ SELECT '{"vector": 0.35, "keyword": 0.65, "graph": 0.3, "community": 0.2, "hyde": 0.1}'::jsonb $$;
COMMENT ON FUNCTION scirag.default_score_weights() IS 'Default score-fusion weights per layer (the ablation in the README)';

CREATE OR REPLACE FUNCTION scirag.fuse_rrf(hits scirag.layer_hit[], weights jsonb DEFAULT '{}', rrf_k int DEFAULT 60)
RETURNS TABLE (chunk_id bigint, score double precision, layers jsonb)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
-- PL/pgSQL rather than SQL: a SQL function with a SET clause is planned on every
-- call (2-5 ms here); PL/pgSQL keeps the plan for the session.
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  -- score(c) = sum over layers of weight(layer) / (rrf_k + rank of c in layer).
  -- Ranks, not native scores: cosine distances and BM25 scores are not comparable.
  -- A layer with no weight (neither default nor given) does not count.
  WITH w AS (SELECT key AS layer, value::float8 AS weight
             FROM jsonb_each_text(scirag.default_rrf_weights() || coalesce(weights, '{}')))
  SELECT h.chunk_id, sum(w.weight / (rrf_k + h.rank)), jsonb_object_agg(h.layer, h.rank)
  FROM unnest(hits) AS h JOIN w ON w.layer = h.layer
  GROUP BY h.chunk_id
  ORDER BY 2 DESC, 1;
END $$;
COMMENT ON FUNCTION scirag.fuse_rrf(scirag.layer_hit[], jsonb, int) IS
  'Weighted reciprocal-rank fusion (k = 60 by default): the one implementation every caller uses. Returns chunks by fused score with the rank each layer gave them.';

CREATE OR REPLACE FUNCTION scirag.fuse_scores(hits scirag.layer_hit[], weights jsonb DEFAULT '{}', keyword_scale text DEFAULT 'max')
RETURNS TABLE (chunk_id bigint, score double precision, layers jsonb)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  IF keyword_scale IS NULL OR keyword_scale NOT IN ('max', 'minmax') THEN
    RAISE EXCEPTION 'scirag.fuse_scores: keyword_scale is max or minmax, not "%"', keyword_scale;
  END IF;
  RETURN QUERY
  -- Weighted convex combination of normalised layer scores:
  -- score(c) = sum over layers of weight(layer) * norm(s), divided by the weights of the
  -- layers that returned anything; norm is s / max for BM25 (keyword_scale 'max') and
  -- (s - min) / (max - min) otherwise. Unlike RRF it keeps the score gaps a layer sees, so
  -- a confident keyword hit is not diluted by a flat dense tail (SciTab table retrieval:
  -- RRF 0.73 hit@5, BM25 alone 0.82, this 0.85). A layer without native scores (graph,
  -- community) scores by rank, linearly (Borda): its candidates are ordered evidence, not
  -- a confidence curve as steep as 1/rank.
  WITH w AS (SELECT key AS layer, value::float8 AS weight
             FROM jsonb_each_text(scirag.default_score_weights() || coalesce(weights, '{}'))),
  h AS (SELECT u.layer, u.chunk_id, u.rank,
               coalesce(u.score, 1.0 - (u.rank - 1)::float8 / count(*) OVER (PARTITION BY u.layer)) AS s
        FROM unnest(hits) AS u JOIN w ON w.layer = u.layer),
  -- BM25 has a true zero (no query term in the chunk), so keyword scores are scaled by
  -- their maximum and a strong 100th hit keeps its weight. Cosine similarity has no
  -- floor a query can be measured against, so the other layers are min-max scaled.
  n AS (SELECT h.*, CASE WHEN h.layer = 'keyword' AND keyword_scale = 'max' AND min(h.s) OVER l >= 0 AND max(h.s) OVER l > 0
                         THEN h.s / max(h.s) OVER l
                         WHEN max(h.s) OVER l > min(h.s) OVER l
                         THEN (h.s - min(h.s) OVER l) / (max(h.s) OVER l - min(h.s) OVER l)
                         ELSE 1.0 END AS norm
        FROM h WINDOW l AS (PARTITION BY h.layer)),
  total AS (SELECT sum(w.weight) AS t FROM w WHERE w.layer IN (SELECT DISTINCT h.layer FROM h))
  SELECT n.chunk_id, sum(w.weight * n.norm) / max(total.t), jsonb_object_agg(n.layer, n.rank)
  FROM n JOIN w ON w.layer = n.layer CROSS JOIN total
  GROUP BY n.chunk_id
  ORDER BY 2 DESC, 1;
END $$;
COMMENT ON FUNCTION scirag.fuse_scores(scirag.layer_hit[], jsonb, text) IS
  'Score fusion: weighted convex combination of normalised layer scores (keyword by its max, or min-max with keyword_scale => ''minmax''; the others min-max); weights default to scirag.default_score_weights(). The default fusion of the interactive and deep profiles.';
GRANT EXECUTE ON FUNCTION scirag.default_rrf_weights(), scirag.default_score_weights(), scirag.fuse_rrf(scirag.layer_hit[], jsonb, int),
  scirag.fuse_scores(scirag.layer_hit[], jsonb, text) TO scirag_reader, scirag_loader;
COMMIT;
