-- Verify scirag:schema/deep_rerank on pg
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM scirag.settings WHERE key = 'reranker_model_path'),
    'a reranker_model_path setting exists';
  -- the interactive and deep profiles never rerank the whole library unless asked
  -- (schema/interactive_rerank_narrow and schema/deep_rerank_narrow let them rerank a
  -- narrow scope, narrow_only)
  ASSERT (SELECT bool_and(NOT config ? 'rerank' OR coalesce((config #>> '{rerank,narrow_only}')::boolean, false))
          FROM scirag.retrieval_profiles WHERE name IN ('interactive', 'deep')),
    'interactive and deep profiles: no rerank stage over the whole library';
END $$;
