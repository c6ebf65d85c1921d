-- Deploy scirag:schema/presets
-- Named pipeline configurations (VulcanLab "RAG configuration presets") as rows:
-- a deployment tunes retrieval, consolidation and augmentation without code edits.
-- A row stores only what it overrides; scirag.preset_get fills in the defaults.
BEGIN;
CREATE TABLE scirag.presets (
  name        text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_.-]{0,62}$'),
  config      jsonb NOT NULL DEFAULT '{}' CHECK (scirag.preset_check(config)),
  description text,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE scirag.presets OWNER TO scirag_owner;
COMMENT ON TABLE scirag.presets IS
  'Named retrieval / consolidation / augmentation configurations (VulcanLab presets). Read with scirag.preset_get (defaults filled in); written by the loader or admin with scirag.preset_set / preset_delete.';
COMMENT ON COLUMN scirag.presets.name IS 'preset name (lower case, digits, _ . -), e.g. default, high-recall';
COMMENT ON COLUMN scirag.presets.config IS
  'jsonb {"retrieval": {...}, "consolidation": {...}, "augmentation": {...}}: only the keys that differ from scirag.preset_defaults(); validated by scirag.preset_check';
COMMENT ON COLUMN scirag.presets.description IS 'what the preset is for';
COMMENT ON COLUMN scirag.presets.updated_at IS 'when the preset was last written';

INSERT INTO scirag.presets (name, config, description) VALUES
  ('default', '{}',
   'VulcanLab defaults; every optional stage (enrichment, reranking, intent bias, MMR, consolidation) off until an ablation earns it'),
  ('high-precision',
   '{"retrieval": {"top_k_rrf": 50, "top_n_final": 10, "mmr_lambda": 0.85, "entity_boost": 0.08,
                   "intent_bias_enabled": true},
     "consolidation": {"coverage_threshold": 0.6, "line_gap": 3},
     "augmentation": {"top_n_contexts": 4}}',
   'fewer, more relevant chunks: a shorter shortlist, relevance-heavy MMR, stronger entity boost, intent bias'),
  ('high-recall',
   '{"retrieval": {"dense_limit": 50, "lexical_limit": 25, "top_k_rrf": 150, "top_n_final": 30,
                   "mmr_lambda": 0.5, "mmr_enabled": true, "profile": "deep"},
     "augmentation": {"top_n_contexts": 8}}',
   'cast a wide net: deeper layers, every layer of the deep profile, diversity-heavy MMR, more contexts'),
  ('detailed-context',
   '{"retrieval": {"min_word_count": 250, "max_word_count": 1500, "enrichment_enabled": true},
     "consolidation": {"enabled": true, "coverage_threshold": 0.4, "line_gap": 12, "min_content_length": 600},
     "augmentation": {"top_n_contexts": 6}}',
   'larger context blocks: parent enrichment to 250-1500 words, eager consolidation (coverage 40%, line gap 12)');
COMMIT;
