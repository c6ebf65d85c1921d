-- Verify scirag:functions/fuse_rrf
DO $$
DECLARE top bigint;
BEGIN
  -- chunk 2 is found by both layers and must beat chunk 1, which only one layer loved
  SELECT f.chunk_id INTO top FROM scirag.fuse_rrf(
    ARRAY[('vector', 1, 1), ('vector', 2, 2), ('keyword', 2, 3)]::scirag.layer_hit[]) f LIMIT 1;
  ASSERT top = 2, 'fuse_rrf does not reward agreement';
END $$;
