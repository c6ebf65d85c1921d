-- Deploy scirag:functions/corpus_maintenance
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
  WITH d AS (DELETE FROM scirag.kw_postings p
             RETURNING p.lexeme, p.chunk_id, p.license, p.source, p.tf, p.dl),
  g AS (SELECT DISTINCT d.lexeme, d.license, d.source FROM d),
  -- the last block of each (lexeme, class) with new postings (PK probe each)
  l AS (SELECT g.lexeme, g.license, g.source,
               (SELECT max(k.block) FROM scirag.kw_blocks k
                WHERE k.lexeme = g.lexeme AND k.license = g.license AND k.source = g.source) AS blk
        FROM g),
  -- a last block with room is merged with the new postings (and rewritten)
  t AS (DELETE FROM scirag.kw_blocks k USING l
        WHERE k.lexeme = l.lexeme AND k.license = l.license AND k.source = l.source AND k.block = l.blk
          AND cardinality(k.chunk_ids) < 128
        RETURNING k.lexeme, k.license, k.source, k.block, k.chunk_ids, k.tfs, k.dls),
  e AS (SELECT d.lexeme, d.license, d.source, d.chunk_id AS cid, d.tf, d.dl FROM d
        UNION ALL
        SELECT t.lexeme, t.license, t.source, x.cid, x.tf, x.dl
        FROM t, unnest(t.chunk_ids, t.tfs, t.dls) AS x(cid, tf, dl)),
  -- the first block number to write: the merged block's, else the one after the last
  s AS (SELECT l.lexeme, l.license, l.source,
               coalesce((SELECT t.block FROM t WHERE t.lexeme = l.lexeme AND t.license = l.license
                         AND t.source = l.source), l.blk + 1, 0) AS first_block
        FROM l),
  cls AS (SELECT c.license, c.source, c.sum_dl::float8 / nullif(c.n_chunks, 0) AS avgdl FROM scirag.kw_class_stats c),
  r AS (SELECT e.*, row_number() OVER (PARTITION BY e.lexeme, e.license, e.source
                      ORDER BY scirag.kw_impact(e.tf, e.dl, cls.avgdl, k1, b) DESC, e.cid) - 1 AS pos
        FROM e LEFT JOIN cls ON cls.license = e.license AND cls.source = e.source),
  ins AS (INSERT INTO scirag.kw_blocks (lexeme, license, source, block, max_tf, min_dl, chunk_ids, tfs, dls)
          SELECT r.lexeme, r.license, r.source, s.first_block + r.pos / 128, max(r.tf), min(r.dl),
                 array_agg(r.cid ORDER BY r.pos), array_agg(r.tf::smallint ORDER BY r.pos), array_agg(r.dl ORDER BY r.pos)
          FROM r JOIN s ON s.lexeme = r.lexeme AND s.license = r.license AND s.source = r.source
          GROUP BY r.lexeme, r.license, r.source, s.first_block, r.pos / 128
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
COMMIT;
