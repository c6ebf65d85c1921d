-- Deploy scirag:schema/eval_screening
-- Screening evaluation (issue 24): `scirag eval screening` simulates an active-learning
-- reviewer over a labelled screening set and stores its runs (WSS@95, recall after
-- 10 % / 20 % screened, records needed for every inclusion) as eval_runs of kind
-- 'screening', one eval_results row per seed.
BEGIN;
ALTER TABLE scirag.eval_runs DROP CONSTRAINT eval_runs_kind_check;
ALTER TABLE scirag.eval_runs ADD CONSTRAINT eval_runs_kind_check
  CHECK (kind IN ('beir', 'retrieval', 'answer', 'table', 'pdf', 'screening'));
COMMENT ON COLUMN scirag.eval_runs.kind IS
  'beir (nDCG@10/Recall@100/MRR), retrieval (hit@k/MRR on seed questions), answer (judge), table (SciTab table retrieval), pdf (PDF fidelity: tables, headings, qa_hit5 against ground truth), screening (active-learning screening simulation: WSS@95, recall at 10 %/20 % screened; one result row per seed)';
COMMIT;
