-- Verify scirag:schema/core
DO $$
BEGIN
  ASSERT (SELECT extversion LIKE '0.8%' FROM pg_extension WHERE extname = 'vector'), 'pgvector 0.8 missing';
  ASSERT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'plpython3u'), 'plpython3u missing';
  ASSERT (SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'scirag') = 'scirag_owner',
         'schema scirag not owned by scirag_owner';
  ASSERT (SELECT count(*) FROM scirag.settings WHERE key IN ('bm25_k1', 'bm25_b', 'embedding_dim')) = 3,
         'settings rows missing';
  ASSERT to_regclass('scirag.role_ceilings') IS NOT NULL, 'role_ceilings missing';
END $$;
