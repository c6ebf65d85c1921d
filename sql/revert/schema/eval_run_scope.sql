-- Revert scirag:schema/eval_run_scope
BEGIN;
ALTER TABLE scirag.eval_runs DROP COLUMN scope_licenses, DROP COLUMN scope_sources;
COMMENT ON COLUMN scirag.eval_runs.corpus_fingerprint IS 'document, chunk and graph counts, embedding versions, latest ingestion: a number without it is a rumour';
COMMIT;
