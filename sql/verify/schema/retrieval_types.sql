-- Verify scirag:schema/retrieval_types
DO $$
BEGIN
  ASSERT to_regtype('scirag.layer_hit') IS NOT NULL, 'scirag.layer_hit missing';
  ASSERT to_regtype('scirag.ranked_hit') IS NOT NULL, 'scirag.ranked_hit missing';
  ASSERT (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
          WHERE attrelid = (SELECT typrelid FROM pg_type WHERE oid = 'scirag.ranked_hit'::regtype) AND attnum > 0)
         = ARRAY['chunk_id', 'score', 'layers'], 'scirag.ranked_hit has the wrong attributes';
END $$;
