-- Verify scirag:schema/deep_rerank on pg
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM scirag.settings WHERE key = 'reranker_model_path'),
    'a reranker_model_path setting exists';
  ASSERT NOT (SELECT config ? 'rerank' FROM scirag.retrieval_profiles WHERE name = 'interactive'),
    'interactive profile: no rerank stage';
END $$;
