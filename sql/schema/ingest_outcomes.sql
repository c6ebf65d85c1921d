-- Deploy scirag:schema/ingest_outcomes
-- Outcomes of an ingest line beyond added / duplicate / failed (issue 25):
--   updated   same content and id as a stored document; the line's stated metadata
--             (title, authors, year, doi, journal, arxiv_id) corrected it
--   replaced  the stored document with this id got new content (--replace, or
--             `scirag docs reparse`), keeping its document id
--   skipped   the file is unchanged since the run that stored it (size, mtime and
--             content hash): not parsed again
BEGIN;

ALTER TABLE scirag.ingest_reports DROP CONSTRAINT ingest_reports_status_check;
ALTER TABLE scirag.ingest_reports ADD CONSTRAINT ingest_reports_status_check
  CHECK (status IN ('added', 'duplicate', 'failed', 'updated', 'replaced', 'skipped'));
COMMENT ON COLUMN scirag.ingest_reports.status IS
  'added, duplicate, failed, updated (metadata corrected), replaced (new content under the same document id) or skipped (file unchanged since it was stored)';
ALTER TABLE scirag.ingest_reports
  ADD COLUMN file_size bigint,
  ADD COLUMN file_mtime double precision,
  ADD COLUMN file_sha256 text;
COMMENT ON COLUMN scirag.ingest_reports.file_size IS 'size in bytes of the file the line read (NULL for manifest text)';
COMMENT ON COLUMN scirag.ingest_reports.file_mtime IS 'modification time (seconds since the epoch) of the file the line read';
COMMENT ON COLUMN scirag.ingest_reports.file_sha256 IS 'SHA-256 of the file''s bytes: with size and mtime, what lets a later run skip an unchanged file';
CREATE INDEX ingest_reports_path ON scirag.ingest_reports (path) WHERE file_sha256 IS NOT NULL;

ALTER TABLE scirag.ingest_runs
  ADD COLUMN updated int NOT NULL DEFAULT 0,
  ADD COLUMN replaced int NOT NULL DEFAULT 0,
  ADD COLUMN skipped int NOT NULL DEFAULT 0;
COMMENT ON COLUMN scirag.ingest_runs.updated IS 'documents whose metadata a manifest line corrected';
COMMENT ON COLUMN scirag.ingest_runs.replaced IS 'documents given new content under the same id (--replace, reparse)';
COMMENT ON COLUMN scirag.ingest_runs.skipped IS 'files unchanged since they were stored, not parsed again';
COMMIT;
