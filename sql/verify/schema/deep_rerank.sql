-- Verify scirag:schema/deep_rerank on pg
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM scirag.settings WHERE key = 'reranker_model_path'),
    'a reranker_model_path setting exists';
  -- the interactive profile never reranks the whole library (schema/interactive_rerank_narrow
  -- lets it rerank a narrow scope, narrow_only)
  ASSERT (SELECT NOT config ? 'rerank' OR coalesce((config #>> '{rerank,narrow_only}')::boolean, false)
          FROM scirag.retrieval_profiles WHERE name = 'interactive'),
    'interactive profile: no rerank stage over the whole library';
END $$;
