-- Revert scirag:schema/interactive_rerank_pool: the narrow scope's pool of 10 at two openings
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = jsonb_set(config - 'pool', '{rerank,paragraphs}', '2')
WHERE name = 'interactive';
COMMIT;
