-- Revert scirag:functions/eval_run
BEGIN;
DROP FUNCTION scirag.eval_scope(), scirag.eval_run_visible(text[], text[]);
COMMIT;
