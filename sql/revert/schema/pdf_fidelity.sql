-- Revert scirag:schema/pdf_fidelity
BEGIN;
DELETE FROM scirag.eval_runs WHERE kind = 'pdf';
ALTER TABLE scirag.eval_runs DROP CONSTRAINT eval_runs_kind_check;
ALTER TABLE scirag.eval_runs ADD CONSTRAINT eval_runs_kind_check
  CHECK (kind IN ('beir', 'retrieval', 'answer', 'table'));
COMMENT ON COLUMN scirag.eval_runs.kind IS 'beir (nDCG@10/Recall@100/MRR), retrieval (hit@k/MRR on seed questions), answer (judge), table (SciTab table retrieval)';
ALTER TABLE scirag.chunks DROP COLUMN is_reference;
COMMENT ON COLUMN scirag.documents.parser IS 'parser that produced the block model (docling, pdfplumber, pypdf, markdown, html, text)';
COMMIT;
