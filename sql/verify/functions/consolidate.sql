-- Verify scirag:functions/consolidate
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.consolidate(bigint[], jsonb)') IS NOT NULL, 'consolidate missing';
  ASSERT (SELECT count(*) FROM scirag.consolidate('{}')) = 0, 'consolidate of nothing returns rows';
  ASSERT scirag.join_overlapping('First sentence here. The carried sentence is this one.',
                                 'The carried sentence is this one. And new text.')
         = 'First sentence here. The carried sentence is this one. And new text.', 'join_overlapping keeps the overlap twice';
END $$;
-- functions/consolidate (issue 16 rework): bodies from chunks.body
DO $$
BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM pg_proc WHERE pronamespace = 'scirag'::regnamespace
                       AND proname IN ('consolidation_render', 'consolidation_groups')
                       AND position('chunk_body' IN prosrc) > 0),
         'consolidation strips the prefix instead of reading chunks.body';
END $$;
DO $$
BEGIN
  -- issue 26: the id array is bounded
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.consolidation_groups(bigint[], jsonb)'::regprocedure) LIKE '%check_limit(cardinality(chunk_ids)%',
         'scirag.consolidation_groups must bound chunk_ids (scirag.check_limit)';
END $$;
