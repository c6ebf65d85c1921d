-- Revert scirag:schema/eval_answers
BEGIN;
DROP FUNCTION scirag.corpus_fingerprint_full();
DROP VIEW scirag.eval_answer_metrics;
DROP VIEW scirag.eval_config_metrics;
DROP TABLE scirag.eval_answers;
DROP TABLE scirag.eval_questions;
COMMIT;
