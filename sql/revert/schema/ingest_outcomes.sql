-- Revert scirag:schema/ingest_outcomes
BEGIN;
ALTER TABLE scirag.ingest_runs DROP COLUMN updated, DROP COLUMN replaced, DROP COLUMN skipped;
DROP INDEX scirag.ingest_reports_path;
ALTER TABLE scirag.ingest_reports DROP COLUMN file_size, DROP COLUMN file_mtime, DROP COLUMN file_sha256;
DELETE FROM scirag.ingest_reports WHERE status NOT IN ('added', 'duplicate', 'failed');
ALTER TABLE scirag.ingest_reports DROP CONSTRAINT ingest_reports_status_check;
ALTER TABLE scirag.ingest_reports ADD CONSTRAINT ingest_reports_status_check
  CHECK (status IN ('added', 'duplicate', 'failed'));
COMMENT ON COLUMN scirag.ingest_reports.status IS 'added, duplicate or failed';
COMMIT;
