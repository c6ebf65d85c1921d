-- Verify scirag:functions/fuse_scores on pg
DO $$
DECLARE
  n int;
BEGIN
  -- only a zero-weighted layer has hits: nothing is ranked, and nothing fails
  SELECT count(*) INTO n
  FROM scirag.fuse_scores(ARRAY[ROW('vector', 1::bigint, 1, 0.9)::scirag.layer_hit],
                          '{"vector": 0, "keyword": 1}', 'max');
  ASSERT n = 0, 'a layer weighted 0 is left out of the fusion';
  SELECT count(*) INTO n
  FROM scirag.fuse_scores(ARRAY[ROW('vector', 1::bigint, 1, 0.9)::scirag.layer_hit,
                                ROW('keyword', 2::bigint, 1, 3.0)::scirag.layer_hit],
                          '{"vector": 0, "keyword": 1}', 'max');
  ASSERT n = 1, 'the weighted layer still ranks its hits';
  ASSERT NOT has_function_privilege('public', 'scirag.fuse_scores(scirag.layer_hit[], jsonb, text)', 'EXECUTE'),
    'PUBLIC may not execute scirag.fuse_scores';
END $$;
