-- Deploy scirag:functions/fuse_rrf
-- Reworked (issue 16): the fusions take their weights from the caller only. The
-- weights live in one place, the retrieval profile rows (scirag.retrieval_profiles,
-- resolved by scirag.retrieve_config); the default_*_weights functions, a second copy
-- that could disagree with the rows, are gone, and so are the parameter defaults.
-- This script holds functions only: scirag.layer_hit belongs to schema/retrieval_types.
BEGIN;

DROP FUNCTION scirag.fuse_rrf(scirag.layer_hit[], jsonb, int);
DROP FUNCTION scirag.fuse_scores(scirag.layer_hit[], jsonb, text);
DROP FUNCTION scirag.default_rrf_weights();
DROP FUNCTION scirag.default_score_weights();

CREATE FUNCTION scirag.fusion_weights(fn text, hits scirag.layer_hit[], weights jsonb)
RETURNS TABLE (layer text, weight double precision)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  missing text;
BEGIN
  -- A layer that found something but has no weight is a configuration error, not a
  -- silent zero: the error names it (the profile rows carry a weight for every layer).
  IF weights IS NULL OR jsonb_typeof(weights) <> 'object' THEN
    RAISE EXCEPTION '%: weights must be a JSON object of layer weights (got %)', fn, coalesce(jsonb_typeof(weights), 'null')
      USING ERRCODE = '22023', HINT = 'SELECT name, config->''weights'' FROM scirag.retrieval_profiles';
  END IF;
  SELECT h.layer INTO missing FROM unnest(hits) AS h
  WHERE jsonb_typeof(weights->h.layer) IS DISTINCT FROM 'number' LIMIT 1;
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION '%: no numeric weight for layer "%"', fn, left(missing, 100)
      USING ERRCODE = '22023', HINT = 'SELECT name, config->''weights'' FROM scirag.retrieval_profiles';
  END IF;
  RETURN QUERY SELECT w.key, w.value::float8 FROM jsonb_each_text(weights) AS w;
END $$;
COMMENT ON FUNCTION scirag.fusion_weights(text, scirag.layer_hit[], jsonb) IS
  'The weights a fusion uses, as rows: refuses (SQLSTATE 22023, naming fn and the layer) weights that are not an object or lack a number for a layer present in hits.';

CREATE FUNCTION scirag.fuse_rrf(hits scirag.layer_hit[], weights jsonb, rrf_k int)
RETURNS TABLE (chunk_id bigint, score double precision, layers jsonb)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
-- PL/pgSQL rather than SQL: a SQL function with a SET clause is planned on every
-- call (2-5 ms here); PL/pgSQL keeps the plan for the session.
AS $$
#variable_conflict use_column
BEGIN
  IF rrf_k IS NULL OR rrf_k < 1 THEN
    RAISE EXCEPTION 'scirag.fuse_rrf: rrf_k must be a positive integer (got %)', coalesce(rrf_k::text, 'null')
      USING ERRCODE = '22023';
  END IF;
  RETURN QUERY
  -- score(c) = sum over layers of weight(layer) / (rrf_k + rank of c in layer).
  -- Ranks, not native scores: cosine distances and BM25 scores are not comparable.
  WITH w AS (SELECT * FROM scirag.fusion_weights('scirag.fuse_rrf', hits, weights))
  SELECT h.chunk_id, sum(w.weight / (rrf_k + h.rank)), jsonb_object_agg(h.layer, h.rank)
  FROM unnest(hits) AS h JOIN w ON w.layer = h.layer
  GROUP BY h.chunk_id
  ORDER BY 2 DESC, 1;
END $$;
COMMENT ON FUNCTION scirag.fuse_rrf(scirag.layer_hit[], jsonb, int) IS
  'Weighted reciprocal-rank fusion: score = sum of weight(layer) / (rrf_k + rank). Weights and rrf_k come from the caller (a retrieval profile row: scirag.retrieve_config); a layer in hits without a weight is an error. Returns chunks by fused score with the rank each layer gave them.';

CREATE FUNCTION scirag.fuse_scores(hits scirag.layer_hit[], weights jsonb, keyword_scale text)
RETURNS TABLE (chunk_id bigint, score double precision, layers jsonb)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  IF keyword_scale IS NULL OR keyword_scale NOT IN ('max', 'minmax') THEN
    RAISE EXCEPTION 'scirag.fuse_scores: keyword_scale is max or minmax, not "%"', keyword_scale
      USING ERRCODE = '22023';
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
  WITH w AS (SELECT * FROM scirag.fusion_weights('scirag.fuse_scores', hits, weights)),
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
  'Score fusion: weighted convex combination of normalised layer scores (keyword by its max, or min-max with keyword_scale => ''minmax''; the others min-max). Weights come from the caller (a retrieval profile row: scirag.retrieve_config); a layer in hits without a weight is an error. The default fusion of the interactive and deep profiles.';
REVOKE ALL ON FUNCTION scirag.fusion_weights(text, scirag.layer_hit[], jsonb), scirag.fuse_rrf(scirag.layer_hit[], jsonb, int),
  scirag.fuse_scores(scirag.layer_hit[], jsonb, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.fusion_weights(text, scirag.layer_hit[], jsonb), scirag.fuse_rrf(scirag.layer_hit[], jsonb, int),
  scirag.fuse_scores(scirag.layer_hit[], jsonb, text) TO scirag_reader, scirag_loader;
COMMIT;
