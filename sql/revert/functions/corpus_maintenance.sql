-- Revert scirag:functions/corpus_maintenance (to its @v1.3 version: kw_blocks_remove as
-- released in @v1.1, repeated here, because including that release's script would run
-- its one-time trigger changes again)
\ir ../../functions/corpus_maintenance@v1.3.sql
BEGIN;
CREATE OR REPLACE FUNCTION scirag.kw_blocks_remove(ids bigint[], tsvs tsvector[], licenses scirag.license_class[], sources text[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
-- Takes chunks out of the compacted blocks of the class they were filed under (they
-- were deleted, or their document moved to another class): a reader of that class
-- must not find them there. Only blocks of the chunks' own lexemes are touched; a
-- block keeps its number and its bounds shrink to what is left.
BEGIN
  WITH gone AS (SELECT DISTINCT u.lexeme, c.license, c.source
                FROM unnest(tsvs, licenses, sources) AS c(tsv, license, source), unnest(c.tsv) AS u),
  old AS (DELETE FROM scirag.kw_blocks b USING gone g
          WHERE b.lexeme = g.lexeme AND b.license = g.license AND b.source = g.source AND b.chunk_ids && ids
          RETURNING b.*)
  INSERT INTO scirag.kw_blocks (lexeme, license, source, block, max_tf, min_dl, chunk_ids, tfs, dls)
  SELECT o.lexeme, o.license, o.source, o.block, max(e.tf), min(e.dl),
         array_agg(e.cid ORDER BY e.ord), array_agg(e.tf ORDER BY e.ord), array_agg(e.dl ORDER BY e.ord)
  FROM old o, unnest(o.chunk_ids, o.tfs, o.dls) WITH ORDINALITY AS e(cid, tf, dl, ord)
  WHERE e.cid <> ALL (ids)
  GROUP BY o.lexeme, o.license, o.source, o.block;
END $$;
COMMENT ON FUNCTION scirag.kw_blocks_remove(bigint[], tsvector[], scirag.license_class[], text[]) IS
  'Removes chunks (id, tsvector, the class they were indexed under) from the compacted BM25 blocks';
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
