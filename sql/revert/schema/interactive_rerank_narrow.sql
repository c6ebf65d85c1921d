-- Revert scirag:schema/interactive_rerank_narrow: the interactive profile without rerank
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = config - 'rerank',
    description = 'humans waiting on a spinner: dense + keyword, score fusion, short budgets'
WHERE name = 'interactive';
COMMIT;
