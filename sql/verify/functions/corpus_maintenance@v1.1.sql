-- Verify scirag:functions/corpus_maintenance
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgname IN
          ('chunks_kw_index', 'chunks_kw_unindex', 'documents_sync_scope')) = 3,
         'corpus maintenance triggers missing';
  ASSERT NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname IN ('kw_postings_stats_add', 'kw_postings_stats_remove')),
         'statistics must no longer be counted from posting rows';
  ASSERT to_regprocedure('scirag.kw_compact(int)') IS NOT NULL, 'kw_compact missing';
END $$;
