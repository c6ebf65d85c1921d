-- Deploy scirag:schema/retrieval_profile_keys
-- Every retrieval profile row holds every key retrieve reads (issue 16): the rows are
-- the one source of the fusion weights (all five layers), rrf_k, keyword_scale, depth
-- and fusion, so no function keeps defaults that could disagree with them.
-- scirag.retrieve_config refuses a profile that lacks one, naming the key.
-- Each key filled in below is the value the released code used when the row had none
-- (scirag.default_score_weights / default_rrf_weights, depth 100, fusion rrf, rrf_k 60,
-- keyword_scale max), so no existing row, shipped or a deployment's own, ranks
-- differently. Two keys are new (the deadline, issue 16):
--   deadline_ms      total time after which the optional layers that have not started
--                    yet are skipped (required layers always run);
--   optional_layers  the layers that deadline may skip.
BEGIN;
UPDATE scirag.retrieval_profiles p
SET config = jsonb_build_object(
               'depth', 100, 'fusion', 'rrf', 'rrf_k', 60, 'keyword_scale', 'max',
               'optional_layers', '["graph", "community", "hyde"]'::jsonb,
               'deadline_ms', CASE WHEN p.name LIKE 'deep%' THEN 20000 ELSE 5000 END)
             || p.config
             || jsonb_build_object('weights',
                  CASE coalesce(p.config->>'fusion', 'rrf')
                    WHEN 'score' THEN '{"vector": 0.35, "keyword": 0.65, "graph": 0.3, "community": 0.2, "hyde": 0.1}'::jsonb
                    ELSE '{"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}'::jsonb
                  END || coalesce(p.config->'weights', '{}'));
COMMENT ON COLUMN scirag.retrieval_profiles.config IS
  'jsonb, every key required unless marked optional: layers (array), depth (candidates per layer), fusion (score or rrf), weights (object with a weight for every layer: the one source of fusion weights), rrf_k (RRF k), keyword_scale (max, minmax or auto: BM25 scaling under score fusion), deadline_ms (optional: total time after which optional layers not yet started are skipped), optional_layers (optional: the layers the deadline may skip), budgets_ms (optional: per stage, a layer over its budget contributes nothing). Bounds: scirag.retrieve_option_schema().';
COMMENT ON TABLE scirag.retrieval_profiles IS
  'Named retrieval profiles: layers, fusion and its weights (the only place they are kept), depth, deadline and per-layer budgets. options passed to scirag.retrieve override them per call; scirag.retrieve_config(profile) shows the resolved configuration.';
COMMIT;
