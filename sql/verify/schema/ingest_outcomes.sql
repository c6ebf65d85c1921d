-- Verify scirag:schema/ingest_outcomes
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'ingest_reports_status_check'
                 AND pg_get_constraintdef(oid) LIKE '%replaced%'), 'ingest_reports.status lacks replaced';
  ASSERT (SELECT count(*) FROM pg_attribute WHERE attrelid = 'scirag.ingest_runs'::regclass
          AND attname IN ('updated', 'replaced', 'skipped') AND NOT attisdropped) = 3, 'ingest_runs lacks its counts';
  ASSERT (SELECT count(*) FROM pg_attribute WHERE attrelid = 'scirag.ingest_reports'::regclass
          AND attname IN ('file_size', 'file_mtime', 'file_sha256') AND NOT attisdropped) = 3,
    'ingest_reports lacks the file signature';
END $$;
