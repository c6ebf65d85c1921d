-- Revert scirag:functions/fuse_scores from pg: the definition functions/fuse_rrf left
BEGIN;

CREATE OR REPLACE FUNCTION scirag.fuse_scores(hits scirag.layer_hit[], weights jsonb, keyword_scale text)
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
REVOKE ALL ON FUNCTION scirag.fuse_scores(scirag.layer_hit[], jsonb, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.fuse_scores(scirag.layer_hit[], jsonb, text) TO scirag_reader, scirag_loader, scirag_api;

COMMIT;
