-- Revert scirag:schema/plain_names
-- Restores the default preset's description; the catalog comments keep their plain
-- wording (documentation only: nothing reads them).
BEGIN;
UPDATE scirag.presets
SET description = 'VulcanLab defaults; every optional stage (enrichment, reranking, intent bias, MMR, consolidation) off until an ablation earns it'
WHERE name = 'default' AND description LIKE 'the defaults of every retrieval, consolidation and augmentation key;%';
COMMIT;
