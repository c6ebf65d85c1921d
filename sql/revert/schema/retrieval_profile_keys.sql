-- Revert scirag:schema/retrieval_profile_keys: the deadline keys go. The keys filled in
-- (weights for every layer, depth, fusion, rrf_k, keyword_scale) stay: each holds the
-- value the released code used in its absence, so the rows rank as before either way.
BEGIN;
UPDATE scirag.retrieval_profiles SET config = config - 'deadline_ms' - 'optional_layers';
COMMENT ON COLUMN scirag.retrieval_profiles.config IS
  'jsonb: layers (array), budgets_ms (object per stage), depth (candidates per layer), fusion (score or rrf), keyword_scale (max or minmax, score fusion), rrf_k, weights (object per layer, for the chosen fusion)';
COMMENT ON TABLE scirag.retrieval_profiles IS
  'Named retrieval profiles: layers, per-layer time budgets (ms), candidate depth, RRF k and weights. options passed to scirag.retrieve override them per call.';
COMMIT;
