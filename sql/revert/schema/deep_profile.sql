-- Revert scirag:schema/deep_profile: the HyDE layer and min-max BM25 back in deep, as schema/retrieval_config wrote them
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = jsonb_set(jsonb_set(config, '{layers}', (config->'layers') || '["hyde"]'), '{keyword_scale}', '"minmax"'),
    description = 'agents, batch jobs and evaluation: every layer, score fusion, generous budgets'
WHERE name = 'deep' AND NOT config->'layers' ? 'hyde';
COMMIT;
