-- Verify scirag:functions/enrich
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.enrich_chunks(bigint[], int, int)') IS NOT NULL, 'enrich_chunks missing';
  ASSERT (SELECT count(*) FROM scirag.enrich_chunks('{}')) = 0, 'enrich_chunks of nothing returns rows';
  ASSERT scirag.enrichment_metrics('{}') ->> 'fallback_count' = '0', 'enrichment_metrics broken';
END $$;
-- functions/enrich (issue 16 rework): bodies from chunks.body, returned with the content
DO $$
BEGIN
  ASSERT (SELECT 'body' = ANY (proargnames) FROM pg_proc
           WHERE oid = 'scirag.enrich_chunks(bigint[], int, int)'::regprocedure),
         'enrich_chunks does not return body';
  ASSERT position('chunk_body' IN (SELECT prosrc FROM pg_proc
                                   WHERE oid = 'scirag.enrich_chunks(bigint[], int, int)'::regprocedure)) = 0,
         'enrich_chunks strips the prefix instead of reading chunks.body';
END $$;
DO $$
BEGIN
  -- issue 26: the id array is bounded
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.enrich_chunks(bigint[], integer, integer)'::regprocedure) LIKE '%check_limit(cardinality(chunk_ids)%',
         'scirag.enrich_chunks must bound chunk_ids (scirag.check_limit)';
END $$;
