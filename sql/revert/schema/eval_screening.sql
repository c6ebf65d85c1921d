-- Revert scirag:schema/eval_screening
BEGIN;
DELETE FROM scirag.eval_runs WHERE kind = 'screening';
ALTER TABLE scirag.eval_runs DROP CONSTRAINT eval_runs_kind_check;
ALTER TABLE scirag.eval_runs ADD CONSTRAINT eval_runs_kind_check
  CHECK (kind IN ('beir', 'retrieval', 'answer', 'table', 'pdf'));
COMMENT ON COLUMN scirag.eval_runs.kind IS
  'beir (nDCG@10/Recall@100/MRR), retrieval (hit@k/MRR on seed questions), answer (judge), table (SciTab table retrieval), pdf (PDF fidelity: tables, headings, qa_hit5 against ground truth)';
COMMIT;
