-- Revert scirag:schema/corpus
BEGIN;
DROP TABLE scirag.ingest_reports, scirag.chunks, scirag.documents, scirag.ingest_runs;
COMMIT;
