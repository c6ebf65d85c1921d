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
  'jsonb: layers (array), budgets_ms (object per stage), depth (candidates per layer), rrf_k, weights (object per layer)';
COMMENT ON COLUMN scirag.retrieval_profiles.description IS 'what the profile is for';

INSERT INTO scirag.retrieval_profiles (name, config, description) VALUES
  ('interactive',
   '{"layers": ["vector", "keyword"], "depth": 100, "rrf_k": 60,
     "budgets_ms": {"embed": 3000, "vector": 1000, "keyword": 1500},
     "weights": {"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}}',
   'humans waiting on a spinner: dense + keyword, short budgets'),
  ('deep',
   '{"layers": ["vector", "keyword", "graph", "community", "hyde"], "depth": 100, "rrf_k": 60,
     "budgets_ms": {"embed": 10000, "vector": 5000, "keyword": 5000, "graph": 10000, "community": 5000, "hyde": 20000},
     "weights": {"vector": 1.5, "keyword": 1.0, "graph": 0.8, "community": 0.6, "hyde": 1.2}}',
   'agents, batch jobs and evaluation: every layer, generous budgets');

ALTER TABLE scirag.retrieval_profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.retrieval_profiles FORCE ROW LEVEL SECURITY;
CREATE POLICY read_all ON scirag.retrieval_profiles FOR SELECT TO PUBLIC USING (true);
GRANT SELECT ON scirag.retrieval_profiles TO scirag_reader, scirag_loader;
COMMIT;
