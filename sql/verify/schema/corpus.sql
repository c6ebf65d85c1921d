-- Verify scirag:schema/corpus
DO $$
BEGIN
  ASSERT (SELECT atttypmod FROM pg_attribute
          WHERE attrelid = 'scirag.chunks'::regclass AND attname = 'embedding')
         = (SELECT value::int FROM scirag.settings WHERE key = 'embedding_dim'),
         'chunks.embedding dimension differs from settings.embedding_dim';
  ASSERT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw'
                 AND indexdef LIKE '%hnsw%vector_cosine_ops%'), 'HNSW cosine index missing';
  ASSERT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'chunks_tsv_gin'), 'GIN index missing';
  ASSERT (SELECT count(*) FROM pg_tables WHERE schemaname = 'scirag'
          AND tablename IN ('documents', 'chunks', 'ingest_runs', 'ingest_reports')
          AND tableowner = 'scirag_owner') = 4, 'corpus tables missing or wrongly owned';
END $$;
