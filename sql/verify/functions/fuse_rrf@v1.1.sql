-- Verify scirag:functions/fuse_rrf
DO $$
DECLARE top bigint;
BEGIN
  -- chunk 2 is found by both layers and must beat chunk 1, which only one layer loved
  SELECT f.chunk_id INTO top FROM scirag.fuse_rrf(
    ARRAY[('vector', 1, 1, NULL), ('vector', 2, 2, NULL), ('keyword', 2, 3, NULL)]::scirag.layer_hit[]) f LIMIT 1;
  ASSERT top = 2, 'fuse_rrf does not reward agreement';
  -- a large keyword score gap must survive score fusion
  SELECT f.chunk_id INTO top FROM scirag.fuse_scores(
    ARRAY[('keyword', 1, 1, 10.0), ('keyword', 2, 2, 1.0), ('keyword', 3, 3, 0.9),
          ('vector', 2, 1, 0.50), ('vector', 1, 2, 0.49), ('vector', 3, 3, 0.10)]::scirag.layer_hit[]) f LIMIT 1;
  ASSERT top = 1, 'fuse_scores does not keep score gaps';
END $$;
