-- Revert scirag:functions/eval_compare
BEGIN;
DROP FUNCTION scirag.eval_compare(bigint, bigint);
COMMIT;
