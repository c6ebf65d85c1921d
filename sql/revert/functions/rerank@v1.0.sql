-- Revert scirag:functions/rerank
BEGIN;
DROP FUNCTION scirag.rerank(text, bigint[], text[], jsonb);
COMMIT;
