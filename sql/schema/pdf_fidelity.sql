-- Deploy scirag:schema/pdf_fidelity
-- PDF fidelity (issue 10).  A paper's bibliography is text worth citing but
-- rarely an answer: its chunks are marked so the search layers can leave them
-- out of default retrieval (they stay readable and citable).  `scirag eval pdf`
-- stores its runs (table, heading and QA fidelity against ground truth) as
-- eval_runs of kind 'pdf', next to the retrieval and answer runs.
BEGIN;

ALTER TABLE scirag.chunks ADD COLUMN is_reference boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN scirag.chunks.is_reference IS
  'true for a chunk of a References/Bibliography section: citable, but not retrieved by default';

ALTER TABLE scirag.eval_runs DROP CONSTRAINT eval_runs_kind_check;
ALTER TABLE scirag.eval_runs ADD CONSTRAINT eval_runs_kind_check
  CHECK (kind IN ('beir', 'retrieval', 'answer', 'table', 'pdf'));
COMMENT ON COLUMN scirag.eval_runs.kind IS
  'beir (nDCG@10/Recall@100/MRR), retrieval (hit@k/MRR on seed questions), answer (judge), table (SciTab table retrieval), pdf (PDF fidelity: tables, headings, qa_hit5 against ground truth)';

COMMENT ON COLUMN scirag.documents.parser IS
  'PDF engine or parser that produced the block model (layout, pdfplumber, pypdf, docling; markdown, html, text)';

COMMIT;
