-- Deploy scirag:schema/retrieval_config
-- Retrieval profiles are rows, so a deployment tunes them without code edits.
BEGIN;
CREATE TABLE scirag.retrieval_profiles (
  name        text PRIMARY KEY,
  config      jsonb NOT NULL,
  description text NOT NULL
);
ALTER TABLE scirag.retrieval_profiles OWNER TO scirag_owner;
COMMENT ON TABLE scirag.retrieval_profiles IS
  'Named retrieval profiles: layers, per-layer time budgets (ms), candidate depth, RRF k and weights. options passed to scirag.retrieve override them per call.';
COMMENT ON COLUMN scirag.retrieval_profiles.name IS 'profile name (interactive, deep, ...)';
COMMENT ON COLUMN scirag.retrieval_profiles.config IS
  'jsonb: layers (array), budgets_ms (object per stage), depth (candidates per layer), fusion (score or rrf), keyword_scale (max or minmax, score fusion), rrf_k, weights (object per layer, for the chosen fusion)';
COMMENT ON COLUMN scirag.retrieval_profiles.description IS 'what the profile is for';

-- The defaults were decided by ablation (README, "Retrieval quality", scripts/bench_ablation.sh):
-- score fusion beats weighted RRF on SciFact (nDCG@10 0.734 vs 0.705) and on SciTab tables
-- (hit@5 0.85 vs 0.73, where RRF fell below BM25 alone). interactive scales BM25 by its
-- max, which keeps a strong keyword tail; deep scales it min-max, so the tail of the
-- keyword list gives way to what only the graph, community and HyDE layers find (the
-- demo's multi-hop answer: rank 9 with min-max, 12 with max). The *-rrf profiles keep
-- the reference's weighted RRF (k = 60, DESIGN.md weights) for comparison.
INSERT INTO scirag.retrieval_profiles (name, config, description) VALUES
  ('interactive',
   '{"layers": ["vector", "keyword"], "depth": 100, "fusion": "score",
     "budgets_ms": {"embed": 3000, "vector": 1000, "keyword": 1500},
     "weights": {"vector": 0.35, "keyword": 0.65}}',
   'humans waiting on a spinner: dense + keyword, score fusion, short budgets'),
  ('deep',
   '{"layers": ["vector", "keyword", "graph", "community", "hyde"], "depth": 100, "fusion": "score",
     "keyword_scale": "minmax",
     "budgets_ms": {"embed": 10000, "vector": 5000, "keyword": 5000, "graph": 10000, "community": 5000, "hyde": 20000},
     "weights": {"vector": 0.35, "keyword": 0.65, "graph": 0.3, "community": 0.2, "hyde": 0.1}}',
   'agents, batch jobs and evaluation: every layer, score fusion, generous budgets'),
  ('interactive-rrf',
   '{"layers": ["vector", "keyword"], "depth": 100, "fusion": "rrf", "rrf_k": 60,
     "budgets_ms": {"embed": 3000, "vector": 1000, "keyword": 1500},
     "weights": {"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}}',
   'dense + keyword fused by weighted RRF (k = 60) with the reference weights'),
  ('deep-rrf',
   '{"layers": ["vector", "keyword", "graph", "community", "hyde"], "depth": 100, "fusion": "rrf", "rrf_k": 60,
     "budgets_ms": {"embed": 10000, "vector": 5000, "keyword": 5000, "graph": 10000, "community": 5000, "hyde": 20000},
     "weights": {"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}}',
   'every layer fused by weighted RRF (k = 60) with the reference weights');

ALTER TABLE scirag.retrieval_profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.retrieval_profiles FORCE ROW LEVEL SECURITY;
CREATE POLICY read_all ON scirag.retrieval_profiles FOR SELECT TO PUBLIC USING (true);
GRANT SELECT ON scirag.retrieval_profiles TO scirag_reader, scirag_loader;
COMMIT;
