-- Deploy scirag:functions/retrieve_fuse
-- Split (issue 28): scirag.retrieve_fuse, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_fuse` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_fuse(hits scirag.layer_hit[], cfg jsonb, OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  fusion text;
  kw_scale text;
  pool int;
  t0 timestamptz := clock_timestamp();
BEGIN
  cfg := scirag.retrieve_config_check(cfg);
  hits := coalesce(hits, '{}');
  fusion := cfg->>'fusion';
  -- BM25 scaling for score fusion. 'auto' is min-max when the graph or community layer
  -- found anything (their hits must be able to outrank the keyword tail: the demo's
  -- multi-hop answer ranks 9th with min-max, 12th with max) and max otherwise, where
  -- max is what measured best (SciFact, SciTab): deep then ranks exactly as interactive.
  kw_scale := cfg->>'keyword_scale';
  IF kw_scale = 'auto' THEN
    kw_scale := CASE WHEN EXISTS (SELECT 1 FROM unnest(hits) h WHERE h.layer IN ('graph', 'community'))
                          THEN 'minmax' ELSE 'max' END;
  END IF;
  -- One candidate pool: k, or a preset's top_k_rrf when later stages choose from it.
  pool := greatest((cfg->>'k')::int, coalesce((cfg->>'pool')::int, (cfg->>'k')::int));
  IF fusion = 'rrf' THEN
    ranked := ARRAY(SELECT ROW(f.chunk_id, f.score, f.layers)::scirag.ranked_hit
                    FROM scirag.fuse_rrf(hits, cfg->'weights', (cfg->>'rrf_k')::int) f
                    ORDER BY f.score DESC, f.chunk_id LIMIT pool);
  ELSE
    ranked := ARRAY(SELECT ROW(f.chunk_id, f.score, f.layers)::scirag.ranked_hit
                    FROM scirag.fuse_scores(hits, cfg->'weights', kw_scale) f
                    ORDER BY f.score DESC, f.chunk_id LIMIT pool);
  END IF;
  stage := jsonb_build_object('stage', 'fuse', 'status', 'ok', 'method', fusion,
    'keyword_scale', CASE WHEN fusion = 'score' THEN kw_scale END,
    'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2),
    'candidates', (SELECT count(DISTINCT h.chunk_id) FROM unnest(hits) h));
END $$;
COMMENT ON FUNCTION scirag.retrieve_fuse(scirag.layer_hit[], jsonb) IS
  'Fusion stage: the layers'' ranked lists into one candidate pool (best first, at most max(k, pool) chunks) by the configuration''s fusion (score: scirag.fuse_scores with keyword_scale, auto resolved; rrf: scirag.fuse_rrf with rrf_k) and its weights, plus the stage''s trace entry.';

REVOKE ALL ON FUNCTION scirag.retrieve_fuse(scirag.layer_hit[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_fuse(scirag.layer_hit[], jsonb) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
