-- Deploy scirag:functions/corpus_maintenance
-- Triggers that keep the copies of scope columns, the BM25 postings and the term
-- statistics in step with documents and chunks, so statistics stay right as
-- documents come and go. Statistics are counted from the chunks themselves, not from
-- posting rows: a chunk's postings live in kw_postings (freshly inserted) or in
-- kw_blocks (after scirag.kw_compact()), and the statistics must not care which.
BEGIN;

DROP TRIGGER kw_postings_stats_add ON scirag.kw_postings;
DROP TRIGGER kw_postings_stats_remove ON scirag.kw_postings;
DROP FUNCTION scirag.kw_stats_add();
DROP FUNCTION scirag.kw_stats_remove();

CREATE OR REPLACE FUNCTION scirag.kw_stats_apply(tsvs tsvector[], licenses scirag.license_class[], sources text[], sign int)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
-- Counts chunks (their tsvector and class, parallel arrays) into (sign 1) or out of
-- (sign -1) the per-class document frequencies, chunk counts and lengths. Callers
-- pass only indexed chunks (not sections).
BEGIN
  IF sign NOT IN (1, -1) THEN
    RAISE EXCEPTION 'kw_stats_apply: sign must be 1 or -1, not %', sign;
  END IF;
  IF sign = 1 THEN
    -- ORDER BY: concurrent loaders lock statistics rows in one order (no deadlock).
    INSERT INTO scirag.kw_term_stats AS s (license, source, lexeme, df)
    SELECT c.license, c.source, u.lexeme, count(*)
    FROM unnest(tsvs, licenses, sources) AS c(tsv, license, source), unnest(c.tsv) AS u
    GROUP BY 1, 2, 3 ORDER BY 3, 1, 2
    ON CONFLICT (lexeme, license, source) DO UPDATE SET df = s.df + excluded.df;
    INSERT INTO scirag.kw_class_stats AS s (license, source, n_chunks, sum_dl)
    SELECT c.license, c.source, count(*),
           sum((SELECT sum(coalesce(cardinality(u.positions), 1)) FROM unnest(c.tsv) AS u))
    FROM unnest(tsvs, licenses, sources) AS c(tsv, license, source)
    WHERE length(c.tsv) > 0
    GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (license, source) DO UPDATE
      SET n_chunks = s.n_chunks + excluded.n_chunks, sum_dl = s.sum_dl + excluded.sum_dl;
  ELSE
    UPDATE scirag.kw_term_stats s SET df = s.df - o.n
    FROM (SELECT c.license, c.source, u.lexeme, count(*) AS n
          FROM unnest(tsvs, licenses, sources) AS c(tsv, license, source), unnest(c.tsv) AS u
          GROUP BY 1, 2, 3 ORDER BY 3, 1, 2) o
    WHERE s.license = o.license AND s.source = o.source AND s.lexeme = o.lexeme;
    DELETE FROM scirag.kw_term_stats WHERE df = 0;
    UPDATE scirag.kw_class_stats s SET n_chunks = s.n_chunks - o.n, sum_dl = s.sum_dl - o.dl
    FROM (SELECT c.license, c.source, count(*) AS n,
                 sum((SELECT sum(coalesce(cardinality(u.positions), 1)) FROM unnest(c.tsv) AS u)) AS dl
          FROM unnest(tsvs, licenses, sources) AS c(tsv, license, source)
          WHERE length(c.tsv) > 0 GROUP BY 1, 2) o
    WHERE s.license = o.license AND s.source = o.source;
    DELETE FROM scirag.kw_class_stats WHERE n_chunks = 0;
  END IF;
END $$;
COMMENT ON FUNCTION scirag.kw_stats_apply(tsvector[], scirag.license_class[], text[], int) IS
  'Counts indexed chunks (tsvector, license, source) into (sign 1) or out of (sign -1) the per-class BM25 statistics';

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

CREATE OR REPLACE FUNCTION scirag.kw_index_new_chunks()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Section chunks repeat their children's text: only prose and table chunks are indexed.
  INSERT INTO scirag.kw_postings (lexeme, chunk_id, document_id, license, source, retracted, tf, dl)
  SELECT u.lexeme, n.id, n.document_id, n.license, n.source, n.retracted,
         coalesce(cardinality(u.positions), 1),
         sum(coalesce(cardinality(u.positions), 1)) OVER (PARTITION BY n.id)
  FROM new_chunks n, unnest(n.tsv) AS u
  WHERE n.kind <> 'section';
  PERFORM scirag.kw_stats_apply(array_agg(n.tsv), array_agg(n.license), array_agg(n.source), 1)
  FROM new_chunks n WHERE n.kind <> 'section' AND n.tsv IS NOT NULL
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_index_new_chunks() IS 'Statement trigger: adds BM25 postings and statistics for inserted chunks';

CREATE OR REPLACE FUNCTION scirag.kw_unindex_old_chunks()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Their kw_postings rows go by ON DELETE CASCADE; compacted postings and the
  -- statistics are taken out here.
  PERFORM scirag.kw_stats_apply(array_agg(o.tsv), array_agg(o.license), array_agg(o.source), -1),
          scirag.kw_blocks_remove(array_agg(o.id), array_agg(o.tsv), array_agg(o.license), array_agg(o.source))
  FROM old_chunks o WHERE o.kind <> 'section' AND o.tsv IS NOT NULL
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_unindex_old_chunks() IS 'Statement trigger: removes deleted chunks from the BM25 blocks and statistics';

CREATE OR REPLACE FUNCTION scirag.sync_document_scope()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- A license, source or retraction change re-files the document's chunks and
  -- postings (and so its statistics) under the new class.
  IF (OLD.license, OLD.source) IS DISTINCT FROM (NEW.license, NEW.source) THEN
    PERFORM scirag.kw_stats_apply(array_agg(c.tsv), array_agg(OLD.license), array_agg(OLD.source), -1),
            scirag.kw_blocks_remove(array_agg(c.id), array_agg(c.tsv), array_agg(OLD.license), array_agg(OLD.source)),
            scirag.kw_stats_apply(array_agg(c.tsv), array_agg(NEW.license), array_agg(NEW.source), 1)
    FROM scirag.chunks c
    WHERE c.document_id = NEW.id AND c.kind <> 'section' AND c.tsv IS NOT NULL
    HAVING count(*) > 0;
  END IF;
  UPDATE scirag.chunks c SET license = NEW.license, source = NEW.source, retracted = NEW.retracted
  WHERE c.document_id = NEW.id;
  IF (OLD.license, OLD.source) IS DISTINCT FROM (NEW.license, NEW.source) THEN
    -- every posting afresh under the new class (kw_compact() files them into blocks later)
    DELETE FROM scirag.kw_postings p WHERE p.document_id = NEW.id;
    INSERT INTO scirag.kw_postings (lexeme, chunk_id, document_id, license, source, retracted, tf, dl)
    SELECT u.lexeme, c.id, c.document_id, c.license, c.source, c.retracted,
           coalesce(cardinality(u.positions), 1),
           sum(coalesce(cardinality(u.positions), 1)) OVER (PARTITION BY c.id)
    FROM scirag.chunks c, unnest(c.tsv) AS u
    WHERE c.document_id = NEW.id AND c.kind <> 'section';
  ELSE
    -- retraction is checked on the chunk itself for compacted postings
    UPDATE scirag.kw_postings p SET retracted = NEW.retracted WHERE p.document_id = NEW.id;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.sync_document_scope() IS 'Row trigger: copies a document''s scope columns to its chunks and postings, moving its BM25 statistics and blocks with its class';

CREATE OR REPLACE FUNCTION scirag.kw_impact(tf int, dl int, avgdl double precision, k1 double precision, b double precision)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT tf / (tf + k1 * (1 - b + b * dl / coalesce(avgdl, dl)))
$$;
COMMENT ON FUNCTION scirag.kw_impact(int, int, double precision, double precision, double precision) IS
  'The BM25 term-frequency factor of a posting (without IDF): the order of postings inside compacted blocks';

CREATE OR REPLACE FUNCTION scirag.kw_compact(parts int DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
-- Moves every posting in kw_postings into kw_blocks: for each (lexeme, class) that has
-- new postings, its old blocks and the new postings are merged, ordered by impact
-- (the BM25 term-frequency factor at the class's average length, best first) and cut
-- into blocks of 128. Lexemes are done in parts (by hash) so no single sort holds
-- the whole index; by default one part per 2 million new postings. Returns the
-- number of postings moved. Readers are not blocked; concurrent inserts wait.
DECLARE
  k1 double precision;
  b double precision;
  total bigint := 0;
  got bigint;
BEGIN
  IF parts IS NOT NULL AND parts < 1 THEN
    RAISE EXCEPTION 'kw_compact: parts must be at least 1, not %', parts;
  END IF;
  LOCK TABLE scirag.kw_postings, scirag.kw_blocks IN SHARE ROW EXCLUSIVE MODE;
  SELECT max(value) FILTER (WHERE key = 'bm25_k1')::float8, max(value) FILTER (WHERE key = 'bm25_b')::float8
    INTO k1, b FROM scirag.settings WHERE key IN ('bm25_k1', 'bm25_b');
  parts := coalesce(parts, greatest(1, ceil((SELECT count(*) FROM scirag.kw_postings) / 2e6)::int));
  FOR i IN 0 .. parts - 1 LOOP
    WITH d AS (DELETE FROM scirag.kw_postings p WHERE parts = 1 OR abs(hashtext(p.lexeme)) % parts = i
               RETURNING p.lexeme, p.chunk_id, p.license, p.source, p.tf, p.dl),
    g AS (SELECT DISTINCT d.lexeme, d.license, d.source FROM d),
    o AS (DELETE FROM scirag.kw_blocks k USING g
          WHERE k.lexeme = g.lexeme AND k.license = g.license AND k.source = g.source
          RETURNING k.lexeme, k.license, k.source, k.chunk_ids, k.tfs, k.dls),
    e AS (SELECT d.lexeme, d.license, d.source, d.chunk_id AS cid, d.tf, d.dl FROM d
          UNION ALL
          SELECT o.lexeme, o.license, o.source, x.cid, x.tf, x.dl
          FROM o, unnest(o.chunk_ids, o.tfs, o.dls) AS x(cid, tf, dl)),
    cls AS (SELECT s.license, s.source, s.sum_dl::float8 / nullif(s.n_chunks, 0) AS avgdl FROM scirag.kw_class_stats s),
    r AS (SELECT e.*, row_number() OVER (PARTITION BY e.lexeme, e.license, e.source
                        ORDER BY scirag.kw_impact(e.tf, e.dl, cls.avgdl, k1, b) DESC, e.cid) - 1 AS pos
          FROM e LEFT JOIN cls ON cls.license = e.license AND cls.source = e.source),
    ins AS (INSERT INTO scirag.kw_blocks (lexeme, license, source, block, max_tf, min_dl, chunk_ids, tfs, dls)
            SELECT r.lexeme, r.license, r.source, r.pos / 128, max(r.tf), min(r.dl),
                   array_agg(r.cid ORDER BY r.pos), array_agg(r.tf::smallint ORDER BY r.pos), array_agg(r.dl ORDER BY r.pos)
            FROM r GROUP BY r.lexeme, r.license, r.source, r.pos / 128
            RETURNING 1)
    SELECT count(*) INTO got FROM d;
    total := total + got;
  END LOOP;
  RETURN total;
END $$;
COMMENT ON FUNCTION scirag.kw_compact(int) IS
  'Moves new BM25 postings (kw_postings) into the compact impact-ordered blocks (kw_blocks) that search_keyword prunes over; run after a load (parts: lexeme hash partitions, default one per 2M postings). Returns postings moved.';

CREATE OR REPLACE FUNCTION scirag.kw_rebuild(parts int DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
-- Rebuilds the statistics and the compacted blocks from chunks.tsv, in one pass per
-- lexeme partition, without going through kw_postings: for a bulk load made with the
-- chunks_kw_index trigger disabled (a million chunks would put 100 million rows in
-- kw_postings first), or to repair. Writers wait; readers are not blocked. Returns
-- the number of postings written.
DECLARE
  k1 double precision;
  b double precision;
BEGIN
  IF parts IS NOT NULL AND parts < 1 THEN
    RAISE EXCEPTION 'kw_rebuild: parts must be at least 1, not %', parts;
  END IF;
  LOCK TABLE scirag.chunks, scirag.kw_postings, scirag.kw_blocks IN SHARE ROW EXCLUSIVE MODE;
  SELECT max(value) FILTER (WHERE key = 'bm25_k1')::float8, max(value) FILTER (WHERE key = 'bm25_b')::float8
    INTO k1, b FROM scirag.settings WHERE key IN ('bm25_k1', 'bm25_b');
  DELETE FROM scirag.kw_term_stats;
  DELETE FROM scirag.kw_class_stats;
  DELETE FROM scirag.kw_postings;
  DELETE FROM scirag.kw_blocks;
  -- (the counts kw_stats_apply makes, over the whole table in one pass)
  INSERT INTO scirag.kw_term_stats (license, source, lexeme, df)
  SELECT c.license, c.source, u.lexeme, count(*)
  FROM scirag.chunks c, unnest(c.tsv) AS u WHERE c.kind <> 'section' GROUP BY 1, 2, 3;
  INSERT INTO scirag.kw_class_stats (license, source, n_chunks, sum_dl)
  SELECT c.license, c.source, count(*), sum((SELECT sum(coalesce(cardinality(u.positions), 1)) FROM unnest(c.tsv) AS u))
  FROM scirag.chunks c WHERE c.kind <> 'section' AND length(c.tsv) > 0 GROUP BY 1, 2;
  parts := coalesce(parts, greatest(1, ceil((SELECT sum(sum_dl) FROM scirag.kw_class_stats) / 2e7)::int));
  FOR i IN 0 .. parts - 1 LOOP
    WITH e AS (SELECT u.lexeme, c.license, c.source, c.id AS cid, coalesce(cardinality(u.positions), 1) AS tf, d.dl
               FROM scirag.chunks c
               CROSS JOIN LATERAL (SELECT sum(coalesce(cardinality(x.positions), 1))::int AS dl FROM unnest(c.tsv) AS x) d
               CROSS JOIN LATERAL unnest(c.tsv) AS u
               WHERE c.kind <> 'section' AND (parts = 1 OR abs(hashtext(u.lexeme)) % parts = i)),
    cls AS (SELECT s.license, s.source, s.sum_dl::float8 / nullif(s.n_chunks, 0) AS avgdl FROM scirag.kw_class_stats s),
    r AS (SELECT e.*, row_number() OVER (PARTITION BY e.lexeme, e.license, e.source
                        ORDER BY scirag.kw_impact(e.tf, e.dl, cls.avgdl, k1, b) DESC, e.cid) - 1 AS pos
          FROM e LEFT JOIN cls ON cls.license = e.license AND cls.source = e.source)
    INSERT INTO scirag.kw_blocks (lexeme, license, source, block, max_tf, min_dl, chunk_ids, tfs, dls)
    SELECT r.lexeme, r.license, r.source, r.pos / 128, max(r.tf), min(r.dl),
           array_agg(r.cid ORDER BY r.pos), array_agg(r.tf::smallint ORDER BY r.pos), array_agg(r.dl ORDER BY r.pos)
    FROM r GROUP BY r.lexeme, r.license, r.source, r.pos / 128;
  END LOOP;
  RETURN (SELECT coalesce(sum(cardinality(k.chunk_ids)), 0) FROM scirag.kw_blocks k);
END $$;
COMMENT ON FUNCTION scirag.kw_rebuild(int) IS
  'Rebuilds BM25 statistics and compacted blocks from chunks.tsv (after a bulk load with the chunks_kw_index trigger disabled, or to repair); parts: lexeme hash partitions. Returns postings written.';

CREATE TRIGGER chunks_kw_unindex AFTER DELETE ON scirag.chunks
  REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION scirag.kw_unindex_old_chunks();

-- Helpers of the triggers, which run as the writer: the loader (and the owner) only.
REVOKE ALL ON FUNCTION scirag.kw_compact(int), scirag.kw_rebuild(int), scirag.kw_stats_apply(tsvector[], scirag.license_class[], text[], int),
  scirag.kw_blocks_remove(bigint[], tsvector[], scirag.license_class[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.kw_compact(int), scirag.kw_rebuild(int), scirag.kw_stats_apply(tsvector[], scirag.license_class[], text[], int),
  scirag.kw_blocks_remove(bigint[], tsvector[], scirag.license_class[], text[]) TO scirag_loader, scirag_owner;

GRANT EXECUTE ON FUNCTION scirag.kw_impact(int, int, double precision, double precision, double precision)
  TO scirag_reader, scirag_loader, scirag_owner;

-- What is already indexed moves into blocks now.
SELECT scirag.kw_compact();
COMMIT;
