-- Revert scirag:schema/deep_profile: the HyDE layer back in deep, as schema/retrieval_config wrote it
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = jsonb_set(config, '{layers}', (config->'layers') || '["hyde"]'),
    description = 'agents, batch jobs and evaluation: every layer, score fusion, generous budgets'
WHERE name = 'deep' AND NOT config->'layers' ? 'hyde';
COMMIT;
