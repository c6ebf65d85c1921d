-- Deploy scirag:schema/retrieval_types
-- The row types retrieval's stages hand each other, in a schema change (issue 16):
-- types live under sql/schema so that the functions using them can be reworked.
-- layer_hit was created by functions/fuse_rrf (released @v1.0/@v1.1, frozen); this
-- change takes it over: it creates it only where it is missing (never, on a database
-- that deployed the plan in order) and from here on it changes only through new
-- schema changes. ranked_hit is new.
BEGIN;
DO $$
BEGIN
  IF to_regtype('scirag.layer_hit') IS NULL THEN
    CREATE TYPE scirag.layer_hit AS (layer text, chunk_id bigint, rank int, score double precision);
  END IF;
END $$;
COMMENT ON TYPE scirag.layer_hit IS 'One candidate from one retrieval layer: the layer, the chunk, its 1-based rank in that layer and the layer''s own score (higher is better; NULL when the layer has none)';

CREATE TYPE scirag.ranked_hit AS (chunk_id bigint, score double precision, layers jsonb);
COMMENT ON TYPE scirag.ranked_hit IS
  'One chunk of a fused candidate list, in list order: the chunk, its fused score and the rank each layer gave it ({"vector": 2, "keyword": 1}). What fusion returns and every later stage (rerank, MMR, formatting) takes and returns.';
GRANT USAGE ON TYPE scirag.ranked_hit TO scirag_reader, scirag_loader;
COMMIT;
