-- Revert scirag:schema/eval
BEGIN;
DROP FUNCTION scirag.corpus_fingerprint();
DROP VIEW scirag.eval_metrics;
DROP TABLE scirag.eval_results, scirag.eval_runs;
COMMIT;
