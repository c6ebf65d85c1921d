-- Revert scirag:schema/deep_rerank_narrow: the deep profile without pool and rerank
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = config - 'pool' - 'rerank',
    description = 'agents, batch jobs and evaluation: dense, keyword, graph and community layers (HyDE on request), score fusion, generous budgets'
WHERE name = 'deep';
COMMIT;
