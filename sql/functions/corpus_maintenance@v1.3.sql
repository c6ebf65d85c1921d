-- Deploy scirag:functions/corpus_maintenance
-- (rework after @v1.2: kw_flush found the merged last block of each lexeme with a
-- subquery over the merged blocks, evaluated for every posting: a flush cost postings
-- x merged blocks (1.25 s for 753 postings in 614 lexemes, growing with the square),
-- and loading SciFact fell to 4.5 abstracts a second against the model's 21. Now every
-- step is a probe or an unnest per (lexeme, class): linear in the postings moved.)
-- Fresh BM25 postings are filed into blocks without anyone remembering to: the insert
-- trigger calls scirag.kw_flush() once about 20,000 fresh postings have piled up (a
-- few hundred chunks). search_keyword reads each fresh posting as a unit of its own,
-- so a large kw_postings slows every reader; before this change only the loader's
-- ingest paths ran kw_compact(), and any other writer left the rows there.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.kw_flush()
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
-- Moves every posting in kw_postings into kw_blocks cheaply: per (lexeme, class) the
-- new postings, with those of the class's last block if it is not full, are ordered
-- by impact and cut into blocks of 128 after the existing ones. Older blocks are not
-- touched or re-sorted (kw_compact() does that: its cost is the whole posting list of
-- every lexeme it touches), so the cost follows the new postings. Every block keeps
-- exact bounds (its largest tf, its shortest length), which is all search_keyword's
-- pruning needs; blocks out of impact order only prune less well until the next
-- kw_compact() or kw_rebuild(). Returns the number of postings moved.
DECLARE
  k1 double precision;
  b double precision;
  got bigint;
BEGIN
  LOCK TABLE scirag.kw_postings, scirag.kw_blocks IN SHARE ROW EXCLUSIVE MODE;
  SELECT max(value) FILTER (WHERE key = 'bm25_k1')::float8, max(value) FILTER (WHERE key = 'bm25_b')::float8
    INTO k1, b FROM scirag.settings WHERE key IN ('bm25_k1', 'bm25_b');
  -- (Only lateral probes and unnests per (lexeme, class): no join between two of these
  -- CTEs, whose sizes the planner cannot know, so no nested loop can rescan one for
  -- every row of the other, as the released version's subquery over the merged blocks
  -- did for every posting. A LEFT JOIN to t, estimated at one row, was planned that way.)
  WITH d AS (DELETE FROM scirag.kw_postings p
             RETURNING p.lexeme, p.chunk_id, p.license, p.source, p.tf, p.dl),
  g AS (SELECT d.lexeme, d.license, d.source,
               array_agg(d.chunk_id) AS ids, array_agg(d.tf) AS tfs, array_agg(d.dl) AS dls
        FROM d GROUP BY d.lexeme, d.license, d.source),
  -- each (lexeme, class) with new postings, with its last block's number and size (PK probe)
  l AS (SELECT g.*, lb.block AS blk, lb.size < 128 AS merge
        FROM g LEFT JOIN LATERAL (
          SELECT k.block, cardinality(k.chunk_ids) AS size FROM scirag.kw_blocks k
          WHERE k.lexeme = g.lexeme AND k.license = g.license AND k.source = g.source
          ORDER BY k.block DESC LIMIT 1) lb ON true),
  -- a last block with room is merged with the new postings (and rewritten)
  t AS (DELETE FROM scirag.kw_blocks k USING l
        WHERE k.lexeme = l.lexeme AND k.license = l.license AND k.source = l.source AND k.block = l.blk AND l.merge
        RETURNING k.lexeme, k.license, k.source, k.block, k.chunk_ids, k.tfs, k.dls),
  -- every posting to write, with the first block number of its (lexeme, class): the
  -- merged block's, else the one after the last, else 0
  e AS (SELECT l.lexeme, l.license, l.source,
               CASE WHEN l.blk IS NULL THEN 0 WHEN l.merge THEN l.blk ELSE l.blk + 1 END AS first_block,
               x.cid, x.tf, x.dl
        FROM l, unnest(l.ids, l.tfs, l.dls) AS x(cid, tf, dl)
        UNION ALL
        SELECT t.lexeme, t.license, t.source, t.block, x.cid, x.tf, x.dl
        FROM t, unnest(t.chunk_ids, t.tfs, t.dls) AS x(cid, tf, dl)),
  cls AS (SELECT c.license, c.source, c.sum_dl::float8 / nullif(c.n_chunks, 0) AS avgdl FROM scirag.kw_class_stats c),
  -- (the window sorts every row, the merged blocks' included, before the first insert:
  -- a merged block is deleted before its number is written again)
  r AS (SELECT e.*, row_number() OVER (PARTITION BY e.lexeme, e.license, e.source
                      ORDER BY scirag.kw_impact(e.tf, e.dl, cls.avgdl, k1, b) DESC, e.cid) - 1 AS pos
        FROM e LEFT JOIN cls ON cls.license = e.license AND cls.source = e.source),
  ins AS (INSERT INTO scirag.kw_blocks (lexeme, license, source, block, max_tf, min_dl, chunk_ids, tfs, dls)
          SELECT r.lexeme, r.license, r.source, r.first_block + r.pos / 128, max(r.tf), min(r.dl),
                 array_agg(r.cid ORDER BY r.pos), array_agg(r.tf::smallint ORDER BY r.pos), array_agg(r.dl ORDER BY r.pos)
          FROM r GROUP BY r.lexeme, r.license, r.source, r.first_block, r.pos / 128
          RETURNING 1)
  SELECT count(*) INTO got FROM d;
  RETURN got;
END $$;
COMMENT ON FUNCTION scirag.kw_flush() IS
  'Moves fresh BM25 postings (kw_postings) into kw_blocks by appending to each (lexeme, class)''s blocks (the last one filled up first), without re-sorting older blocks; called by the chunk insert trigger past 20,000 fresh postings. Returns postings moved.';

CREATE OR REPLACE FUNCTION scirag.kw_index_new_chunks()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  added bigint;
  limit_postings bigint := CASE WHEN current_setting('scirag.kw_flush_postings', true) ~ '^\s*\d{1,12}\s*$'
                                THEN btrim(current_setting('scirag.kw_flush_postings', true))::bigint ELSE 20000 END;
BEGIN
  -- Section chunks repeat their children's text: only prose and table chunks are indexed.
  INSERT INTO scirag.kw_postings (lexeme, chunk_id, document_id, license, source, retracted, tf, dl)
  SELECT u.lexeme, n.id, n.document_id, n.license, n.source, n.retracted,
         coalesce(cardinality(u.positions), 1),
         sum(coalesce(cardinality(u.positions), 1)) OVER (PARTITION BY n.id)
  FROM new_chunks n, unnest(n.tsv) AS u
  WHERE n.kind <> 'section';
  GET DIAGNOSTICS added = ROW_COUNT;
  PERFORM scirag.kw_stats_apply(array_agg(n.tsv), array_agg(n.license), array_agg(n.source), 1)
  FROM new_chunks n WHERE n.kind <> 'section' AND n.tsv IS NOT NULL
  HAVING count(*) > 0;
  -- Past about 20,000 fresh postings (the session may set scirag.kw_flush_postings)
  -- they go into blocks now. The count is the statistics system's, cheap to read on
  -- every insert: committed rows plus this transaction's inserts minus its deletes.
  -- kw_flush waits for no one: when another writer holds kw_postings (a concurrent
  -- load, which would deadlock with us) a later insert flushes.
  IF added > 0 AND pg_stat_get_live_tuples('scirag.kw_postings'::regclass)
                   + pg_stat_get_xact_tuples_inserted('scirag.kw_postings'::regclass)
                   - pg_stat_get_xact_tuples_deleted('scirag.kw_postings'::regclass) >= limit_postings THEN
    BEGIN
      LOCK TABLE scirag.kw_postings, scirag.kw_blocks IN SHARE ROW EXCLUSIVE MODE NOWAIT;
      PERFORM scirag.kw_flush();
    EXCEPTION WHEN lock_not_available THEN
      NULL;
    END;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_index_new_chunks() IS
  'Statement trigger: adds BM25 postings and statistics for inserted chunks; past about 20,000 fresh postings (session setting scirag.kw_flush_postings) files them into blocks (scirag.kw_flush)';

REVOKE ALL ON FUNCTION scirag.kw_flush() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.kw_flush() TO scirag_loader, scirag_owner;
-- (a rework after a release keeps the reader wall, DESIGN.md section 11)
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
