-- Verify scirag:functions/corpus_maintenance
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgname IN
          ('chunks_kw_index', 'kw_postings_stats_add', 'kw_postings_stats_remove', 'documents_sync_scope')) = 4,
         'corpus maintenance triggers missing';
END $$;
