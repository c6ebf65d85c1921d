-- Verify scirag:schema/eval
DO $$
BEGIN
  ASSERT to_regclass('scirag.eval_runs') IS NOT NULL AND to_regclass('scirag.eval_results') IS NOT NULL,
         'eval tables missing';
  ASSERT to_regclass('scirag.eval_metrics') IS NOT NULL, 'eval_metrics view missing';
  ASSERT scirag.corpus_fingerprint() ? 'embedding_versions', 'corpus_fingerprint incomplete';
END $$;
