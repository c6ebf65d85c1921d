-- Revert scirag:schema/deep_profile_rerank from pg: the deep profile without its rerank
-- stage again (a row whose stage an admin changed since is left as it is)
BEGIN;

UPDATE scirag.retrieval_profiles
SET config = config - 'pool' - 'rerank',
    description = 'agents, batch jobs and evaluation: dense, keyword, graph and community layers (HyDE on request), score fusion, generous budgets'
WHERE name = 'deep'
  AND config->'rerank' = '{"reranker": "cross_encoder", "batch_size": 16, "entity_boost": 0}'::jsonb
  AND config->'pool' = '20'::jsonb;

COMMIT;
