-- Revert scirag:functions/corpus_maintenance from scirag:functions/corpus_maintenance@v1.0
-- Compacted postings go back to one row each (what the earlier search_keyword reads),
-- then the earlier triggers, which count statistics from posting rows, return.
BEGIN;
INSERT INTO scirag.kw_postings (lexeme, chunk_id, document_id, license, source, retracted, tf, dl)
SELECT b.lexeme, x.cid, c.document_id, b.license, b.source, c.retracted, x.tf, x.dl
FROM scirag.kw_blocks b, unnest(b.chunk_ids, b.tfs, b.dls) AS x(cid, tf, dl)
JOIN scirag.chunks c ON c.id = x.cid;
DELETE FROM scirag.kw_blocks;
DROP TRIGGER chunks_kw_unindex ON scirag.chunks;
DROP TRIGGER chunks_kw_index ON scirag.chunks;
DROP TRIGGER documents_sync_scope ON scirag.documents;
DROP FUNCTION scirag.kw_unindex_old_chunks(), scirag.kw_compact(int), scirag.kw_rebuild(int),
  scirag.kw_impact(int, int, double precision, double precision, double precision),
  scirag.kw_stats_apply(tsvector[], scirag.license_class[], text[], int),
  scirag.kw_blocks_remove(bigint[], tsvector[], scirag.license_class[], text[]);
-- The functions and triggers of functions/corpus_maintenance@v1.0:
-- Triggers that keep the copies of scope columns and the BM25 index in step with
-- documents and chunks, so term statistics stay right as documents come and go.

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
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_index_new_chunks() IS 'Statement trigger: adds BM25 postings for inserted chunks';

CREATE OR REPLACE FUNCTION scirag.kw_stats_add()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- ORDER BY: concurrent loaders lock statistics rows in one order (no deadlock).
  INSERT INTO scirag.kw_term_stats AS s (license, source, lexeme, df)
  SELECT license, source, lexeme, count(*) FROM new_postings
  GROUP BY 1, 2, 3 ORDER BY 3, 1, 2
  ON CONFLICT (lexeme, license, source) DO UPDATE SET df = s.df + excluded.df;
  INSERT INTO scirag.kw_class_stats AS s (license, source, n_chunks, sum_dl)
  SELECT license, source, count(*), sum(dl)
  FROM (SELECT DISTINCT chunk_id, license, source, dl FROM new_postings) c
  GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (license, source) DO UPDATE
    SET n_chunks = s.n_chunks + excluded.n_chunks, sum_dl = s.sum_dl + excluded.sum_dl;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_stats_add() IS 'Statement trigger: counts inserted postings into the per-class statistics';

CREATE OR REPLACE FUNCTION scirag.kw_stats_remove()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  UPDATE scirag.kw_term_stats s SET df = s.df - o.n
  FROM (SELECT license, source, lexeme, count(*) AS n FROM old_postings GROUP BY 1, 2, 3 ORDER BY 3, 1, 2) o
  WHERE s.license = o.license AND s.source = o.source AND s.lexeme = o.lexeme;
  DELETE FROM scirag.kw_term_stats WHERE df = 0;
  UPDATE scirag.kw_class_stats s SET n_chunks = s.n_chunks - o.n, sum_dl = s.sum_dl - o.dl
  FROM (SELECT license, source, count(*) AS n, sum(dl) AS dl
        FROM (SELECT DISTINCT chunk_id, license, source, dl FROM old_postings) c GROUP BY 1, 2) o
  WHERE s.license = o.license AND s.source = o.source;
  DELETE FROM scirag.kw_class_stats WHERE n_chunks = 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_stats_remove() IS 'Statement trigger: removes deleted postings from the per-class statistics';

CREATE OR REPLACE FUNCTION scirag.sync_document_scope()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- A license, source or retraction change re-files the document's chunks and
  -- postings (and so its statistics) under the new class.
  UPDATE scirag.chunks c SET license = NEW.license, source = NEW.source, retracted = NEW.retracted
  WHERE c.document_id = NEW.id;
  DELETE FROM scirag.kw_postings p WHERE p.document_id = NEW.id;
  INSERT INTO scirag.kw_postings (lexeme, chunk_id, document_id, license, source, retracted, tf, dl)
  SELECT u.lexeme, c.id, c.document_id, c.license, c.source, c.retracted,
         coalesce(cardinality(u.positions), 1),
         sum(coalesce(cardinality(u.positions), 1)) OVER (PARTITION BY c.id)
  FROM scirag.chunks c, unnest(c.tsv) AS u
  WHERE c.document_id = NEW.id AND c.kind <> 'section';
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.sync_document_scope() IS 'Row trigger: copies a document''s scope columns to its chunks and postings';

CREATE TRIGGER chunks_kw_index AFTER INSERT ON scirag.chunks
  REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION scirag.kw_index_new_chunks();
CREATE TRIGGER kw_postings_stats_add AFTER INSERT ON scirag.kw_postings
  REFERENCING NEW TABLE AS new_postings FOR EACH STATEMENT EXECUTE FUNCTION scirag.kw_stats_add();
CREATE TRIGGER kw_postings_stats_remove AFTER DELETE ON scirag.kw_postings
  REFERENCING OLD TABLE AS old_postings FOR EACH STATEMENT EXECUTE FUNCTION scirag.kw_stats_remove();
CREATE TRIGGER documents_sync_scope AFTER UPDATE OF license, source, retracted ON scirag.documents
  FOR EACH ROW WHEN ((OLD.license, OLD.source, OLD.retracted) IS DISTINCT FROM (NEW.license, NEW.source, NEW.retracted))
  EXECUTE FUNCTION scirag.sync_document_scope();
COMMIT;
