-- Verify scirag:functions/enrich
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.enrich_chunks(bigint[], int, int)') IS NOT NULL, 'enrich_chunks missing';
  ASSERT (SELECT count(*) FROM scirag.enrich_chunks('{}')) = 0, 'enrich_chunks of nothing returns rows';
  ASSERT scirag.enrichment_metrics('{}') ->> 'fallback_count' = '0', 'enrichment_metrics broken';
END $$;
