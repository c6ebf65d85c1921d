-- Compacted BM25 postings and the pruned keyword search (docs/retrieval.md,
-- issue 12): whatever mix of fresh postings (kw_postings) and compacted blocks
-- (kw_blocks) holds the index, search_keyword returns exactly the top n that
-- scoring every chunk would, for a reader and for the loader, with the reader's
-- scope narrowing; blocks follow deletes and re-licensing; restricted text still
-- does not move a reader's scores.
BEGIN;
SELECT plan(48);
\ir helpers/fixtures.psql

-- A corpus with skewed word frequencies (a few words in most chunks, most words in
-- few), so common terms fill several blocks of 128 and rare ones part of one.
CREATE FUNCTION tests.zipf_text(words int) RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT string_agg((ARRAY['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india',
                          'juliet', 'kilo', 'lima', 'mike', 'oscar', 'papa', 'quebec', 'romeo', 'sierra',
                          'tango', 'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu'])
                    [1 + floor(25 * power(random(), 2.5))::int], ' ')
  FROM generate_series(1, words)
$$;
CREATE FUNCTION tests.add_zipf_docs(prefix text, docs int, license text, source text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. docs LOOP
    PERFORM tests.add_doc(prefix || i, license, source,
      (SELECT array_agg(tests.zipf_text(3 + floor(random() * 28)::int)) FROM generate_series(1, 10)));
  END LOOP;
END $$;

-- Exhaustive BM25 as the caller sees it (row-level security applies): every chunk
-- scored, the query's words OR-ed, term frequencies of the query counted.
CREATE FUNCTION tests.bm25_ref(q text, lim int) RETURNS TABLE (chunk_id bigint, score float8)
LANGUAGE sql STABLE AS $$
  WITH s AS (SELECT max(value) FILTER (WHERE key = 'bm25_k1')::float8 AS k1,
                    max(value) FILTER (WHERE key = 'bm25_b')::float8 AS b FROM scirag.settings),
  cls AS (SELECT sum(n_chunks)::float8 AS n, sum(sum_dl)::float8 / sum(n_chunks) AS avgdl FROM scirag.kw_class_stats),
  qt AS (SELECT u.lexeme, cardinality(u.positions) AS qtf FROM unnest(to_tsvector('english', q)) AS u),
  w AS (SELECT qt.lexeme, qt.qtf * ln(1 + (cls.n - d.df + 0.5) / (d.df + 0.5)) AS idf
        FROM qt JOIN (SELECT lexeme, sum(df)::float8 AS df FROM scirag.kw_term_stats GROUP BY 1) d USING (lexeme), cls),
  c AS (SELECT c.id, u.lexeme, cardinality(u.positions) AS tf,
               sum(cardinality(u.positions)) OVER (PARTITION BY c.id) AS dl
        FROM scirag.chunks c, unnest(c.tsv) AS u WHERE c.kind <> 'section')
  SELECT c.id, sum(w.idf * c.tf * (s.k1 + 1) / (c.tf + s.k1 * (1 - s.b + s.b * c.dl / cls.avgdl)))
  FROM c JOIN w USING (lexeme), s, cls
  GROUP BY c.id ORDER BY 2 DESC, 1 LIMIT lim
$$;
-- readers hold no privilege on the index tables: read them as the reader API does
-- (policies/reader_wall), so the policies still decide what counts
SELECT tests.through_api('tests.bm25_ref(text, int)') AS _ \gset
-- ... and through the API the loader gets its session scope too: ask for every class
CREATE FUNCTION tests.all_classes() RETURNS void
LANGUAGE sql AS $$ SELECT set_config('scirag.licenses', 'public,open_commercial,open_noncommercial,restricted,unknown', true) $$;
CREATE TABLE tests.kw_queries (q text PRIMARY KEY, n int NOT NULL);
INSERT INTO tests.kw_queries VALUES
  ('alpha', 10), ('zulu', 10), ('alpha bravo', 10), ('yankee zulu xray', 5), ('alpha yankee', 20),
  ('charlie delta echo foxtrot golf hotel', 10), ('alpha alpha zulu', 10), ('mike', 3),
  ('india juliet kilo lima', 50), ('whiskey alpha bravo charlie', 1), ('bravo', 200);
GRANT SELECT ON tests.kw_queries TO PUBLIC;
-- Queries whose pruned top n differs from the exhaustive one: the same scores (to
-- 1e-9) in rank order, and the same chunks at each score above the n-th (chunks
-- tied at the cut may differ: "ties aside").
CREATE FUNCTION tests.kw_mismatches() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
  WITH k AS (SELECT k.q,
                    ARRAY(SELECT row(chunk_id, round(score::numeric, 9))::text
                          FROM scirag.search_keyword(k.q, k.n, proximity => 0) ORDER BY round(score::numeric, 9) DESC, chunk_id) AS got,
                    ARRAY(SELECT row(chunk_id, round(score::numeric, 9))::text
                          FROM tests.bm25_ref(k.q, k.n) ORDER BY round(score::numeric, 9) DESC, chunk_id) AS want,
                    ARRAY(SELECT round(score::numeric, 9) FROM scirag.search_keyword(k.q, k.n, proximity => 0) ORDER BY rank) AS got_s,
                    ARRAY(SELECT round(score::numeric, 9) FROM tests.bm25_ref(k.q, k.n) ORDER BY 1 DESC) AS want_s
             FROM tests.kw_queries k)
  SELECT k.q FROM k
  WHERE k.got_s IS DISTINCT FROM k.want_s
     OR ARRAY(SELECT x FROM unnest(k.got) x WHERE (x::text) NOT LIKE '%,' || k.got_s[cardinality(k.got_s)] || ')')
        IS DISTINCT FROM
        ARRAY(SELECT x FROM unnest(k.want) x WHERE (x::text) NOT LIKE '%,' || k.want_s[cardinality(k.want_s)] || ')')
$$;
-- Differences between the index (fresh postings and block entries together) and a
-- rebuild from chunks.tsv, duplicates included; and blocks whose bounds are wrong.
-- Run as the session superuser (no row-level security).
CREATE FUNCTION tests.kw_block_drift() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
  WITH want AS (SELECT u.lexeme, c.id AS chunk_id, c.license::text AS license, c.source,
                       cardinality(u.positions) AS tf,
                       sum(cardinality(u.positions)) OVER (PARTITION BY c.id)::int AS dl
                FROM scirag.chunks c, unnest(c.tsv) AS u WHERE c.kind <> 'section'),
  have AS (SELECT lexeme, chunk_id, license::text, source, tf, dl FROM scirag.kw_postings
           UNION ALL
           SELECT b.lexeme, x.cid, b.license::text, b.source, x.tf, x.dl
           FROM scirag.kw_blocks b, unnest(b.chunk_ids, b.tfs, b.dls) AS x(cid, tf, dl))
  (SELECT 'only in index: ' || h::text FROM (SELECT * FROM have EXCEPT ALL SELECT * FROM want) h
   UNION ALL
   SELECT 'missing: ' || w::text FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM have) w)
  UNION ALL
  SELECT 'bad bound: ' || b.lexeme || '/' || b.block
  FROM scirag.kw_blocks b
  WHERE b.max_tf <> (SELECT max(t) FROM unnest(b.tfs) t) OR b.min_dl <> (SELECT min(d) FROM unnest(b.dls) d)
$$;
-- Per-class document frequencies, chunk counts and lengths that differ from a count over chunks.tsv.
CREATE FUNCTION tests.kw_stats_drift() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
  WITH c AS (SELECT c.license::text AS license, c.source, c.tsv FROM scirag.chunks c WHERE c.kind <> 'section'),
  want AS (SELECT c.license, c.source, u.lexeme, count(*) AS n FROM c, unnest(c.tsv) AS u GROUP BY 1, 2, 3
           UNION ALL
           SELECT c.license, c.source, '#chunks', count(*) FROM c WHERE length(c.tsv) > 0 GROUP BY 1, 2
           UNION ALL
           SELECT c.license, c.source, '#length', sum(cardinality(u.positions)) FROM c, unnest(c.tsv) AS u GROUP BY 1, 2),
  have AS (SELECT license::text, source, lexeme, df::bigint FROM scirag.kw_term_stats
           UNION ALL SELECT license::text, source, '#chunks', n_chunks FROM scirag.kw_class_stats
           UNION ALL SELECT license::text, source, '#length', sum_dl FROM scirag.kw_class_stats)
  (SELECT 'have ' || h::text FROM (SELECT * FROM have EXCEPT ALL SELECT * FROM want) h
   UNION ALL
   SELECT 'want ' || w::text FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM have) w)
$$;
CREATE TABLE tests.kw_snap (label text, q text, top text[]);
GRANT ALL ON tests.kw_snap TO PUBLIC;
CREATE FUNCTION tests.kw_snap(label text) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO tests.kw_snap
  SELECT label, k.q, ARRAY(SELECT row(chunk_id, rank, score)::text FROM scirag.search_keyword(k.q, 20) ORDER BY rank)
  FROM tests.kw_queries k
$$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA tests TO PUBLIC;

-- ---------------------------------------------------------------- fresh postings only
SELECT tests.as_role('scirag_loader');
SELECT tests.add_zipf_docs('zp-', 30, 'public', 'src_z');
SELECT tests.add_zipf_docs('zo-', 8, 'open_commercial', 'src_y');
SELECT tests.add_zipf_docs('zn-', 4, 'open_noncommercial', 'src_z');
SELECT tests.add_zipf_docs('zr-', 6, 'restricted', 'src_z');
SELECT tests.as_role(NULL);
SELECT is_empty($$SELECT * FROM tests.kw_block_drift()$$, 'fresh postings equal a rebuild from chunks.tsv');
SELECT tests.as_role('scirag_reader');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$,
  'fresh postings: a reader''s pruned top n equals exhaustive BM25 over its scope, for every query');
SELECT tests.as_role('scirag_loader');
SELECT tests.all_classes();
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, '... and the loader''s (every class)');
RESET scirag.licenses;

-- ---------------------------------------------------------------- compacted
SELECT tests.as_role(NULL);
SELECT count(*) AS fresh FROM scirag.kw_postings \gset
SELECT tests.as_role('scirag_loader');
SELECT is(scirag.kw_compact(), :fresh::bigint, 'kw_compact moves every fresh posting and says how many');
SELECT tests.as_role(NULL);
SELECT is((SELECT count(*) FROM scirag.kw_postings), 0::bigint, '... kw_postings is empty afterwards');
SELECT is_empty($$SELECT * FROM tests.kw_block_drift()$$, '... blocks hold exactly the postings, with true bounds');
SELECT ok((SELECT max(cardinality(chunk_ids)) FROM scirag.kw_blocks) = 128
          AND EXISTS (SELECT 1 FROM scirag.kw_blocks WHERE block >= 2),
  'setup: common terms fill several blocks of 128');
SELECT is_empty(
  $$SELECT b.lexeme, b.license, b.source, b.block FROM scirag.kw_blocks b
    JOIN scirag.kw_blocks nxt ON (nxt.lexeme, nxt.license, nxt.source, nxt.block) = (b.lexeme, b.license, b.source, b.block + 1)
    WHERE (SELECT min(x.tf::float8 / (x.tf + 0.9 * (0.6 + 0.4 * x.dl / 20.0))) FROM unnest(b.tfs, b.dls) x(tf, dl))
        < (SELECT max(x.tf::float8 / (x.tf + 0.9 * (0.6 + 0.4 * x.dl / 20.0))) FROM unnest(nxt.tfs, nxt.dls) x(tf, dl)) - 0.05$$,
  'blocks are impact-ordered: block k+1 holds no posting clearly stronger than block k''s weakest');
SELECT tests.as_role('scirag_reader');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, 'compacted: the reader''s pruned top n is exact');
SELECT is(tests.api_count($$SELECT * FROM scirag.kw_blocks WHERE license NOT IN ('public', 'open_commercial')$$), '0',
  'a reader sees only the blocks of the classes in its scope');
SELECT tests.as_role('scirag_loader');
SELECT tests.all_classes();
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, '... and the loader''s');
RESET scirag.licenses;

-- ---------------------------------------------------------------- mixed: new text, deletes, re-licensing, narrowing
SELECT tests.as_role('scirag_loader');
SELECT tests.add_zipf_docs('zq-', 4, 'public', 'src_z');
SELECT document_id AS del_doc FROM tests.fx WHERE external_id = 'zp-1' LIMIT 1 \gset
SELECT document_id AS relic_doc FROM tests.fx WHERE external_id = 'zp-2' LIMIT 1 \gset
SELECT document_id AS retr_doc FROM tests.fx WHERE external_id = 'zp-3' LIMIT 1 \gset
SELECT document_id AS excl_doc FROM tests.fx WHERE external_id = 'zo-1' LIMIT 1 \gset
SELECT document_id AS up_doc FROM tests.fx WHERE external_id = 'zn-1' LIMIT 1 \gset
DELETE FROM scirag.documents WHERE id = :del_doc;
DELETE FROM scirag.chunks WHERE document_id = :excl_doc AND ordinal = 4;
UPDATE scirag.documents SET license = 'restricted' WHERE id = :relic_doc;
UPDATE scirag.documents SET license = 'public' WHERE id = :up_doc;
UPDATE scirag.documents SET retracted = true WHERE id = :retr_doc;
-- many chunks in one statement: kw_blocks_remove looks their ids up in a hash (16 or more)
SELECT ok((SELECT count(*) FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
           WHERE d.external_id IN ('zp-4', 'zp-5', 'zp-6') AND c.kind <> 'section') >= 16,
  'setup: the documents deleted together hold 16 chunks or more');
DELETE FROM scirag.documents WHERE external_id IN ('zp-4', 'zp-5', 'zp-6');
SELECT tests.as_role(NULL);
SELECT is_empty($$SELECT k.lexeme, k.block FROM scirag.kw_blocks k, unnest(k.chunk_ids) AS x(id)
                  WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.id = x.id)$$,
  'chunks deleted many at a time leave no posting behind in the blocks');
SELECT is_empty($$SELECT * FROM tests.kw_block_drift() UNION ALL SELECT * FROM tests.kw_stats_drift()$$,
  'after inserts, deletes and re-licensing over compacted blocks: the index and statistics equal a rebuild');
SELECT tests.as_role('scirag_reader');
SELECT is(tests.api_count(format($$SELECT * FROM scirag.kw_blocks WHERE chunk_ids && ARRAY(SELECT chunk_id FROM tests.fx WHERE document_id = %s)$$, :relic_doc)), '0',
  'a document re-licensed to restricted leaves the blocks a reader can read');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, 'mixed fresh and compacted postings: the reader''s top n is exact');
SET LOCAL scirag.exclude_retracted = 'on';
SELECT set_config('scirag.exclude_documents', 'zo-1', true) AS ignored \gset
SELECT isnt(tests.api_count(
  format($$SELECT 1 FROM scirag.kw_blocks WHERE chunk_ids && ARRAY(SELECT chunk_id FROM tests.fx WHERE document_id IN (%s, %s))$$,
         :retr_doc, :excl_doc)), '0',
  'setup: the excluded and the retracted documents are still in blocks the reader can read');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$,
  'with exclude_documents and exclude_retracted: exact, and they never appear');
SET LOCAL scirag.licenses = 'open_commercial';
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, 'narrowed to one license class: exact');
RESET scirag.licenses;
RESET scirag.exclude_retracted;
SELECT set_config('scirag.exclude_documents', '', true) AS ignored \gset
SELECT tests.as_role('scirag_loader');
SELECT tests.all_classes();
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, 'mixed: the loader''s top n is exact');
RESET scirag.licenses;
SELECT ok(scirag.kw_compact(parts => 3) > 0, 'a compaction in three lexeme partitions moves the new postings');
SELECT tests.as_role(NULL);
SELECT is_empty($$SELECT * FROM tests.kw_block_drift()$$, '... and the index still equals a rebuild');
SELECT tests.as_role('scirag_reader');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, '... and the reader''s top n is exact');

-- ---------------------------------------------------------------- restricted text, compacted, moves no reader score
SELECT tests.kw_snap('before');
SELECT tests.as_role('scirag_loader');
SELECT tests.add_zipf_docs('zs-', 6, 'restricted', 'src_z');
SELECT tests.add_doc('zs-dense', 'restricted', 'src_z', ARRAY['alpha zulu yankee alpha', 'mike mike bravo']) AS ignored \gset
SELECT scirag.kw_compact() AS ignored \gset
SELECT tests.as_role('scirag_reader');
SELECT tests.kw_snap('after');
SELECT is_empty(
  $$SELECT q, top FROM tests.kw_snap WHERE label = 'after' EXCEPT SELECT q, top FROM tests.kw_snap WHERE label = 'before'$$,
  'restricted text, compacted into blocks, changes no score or rank a reader sees');

-- ---------------------------------------------------------------- rebuild from chunks.tsv
SELECT tests.as_role('scirag_loader');
SELECT tests.add_zipf_docs('zt-', 2, 'public', 'src_z');
SELECT is(scirag.kw_rebuild(parts => 2), (SELECT sum(length(tsv))::bigint FROM scirag.chunks WHERE kind <> 'section'),
  'kw_rebuild writes one posting per (lexeme, chunk)');
SELECT tests.as_role(NULL);
SELECT is_empty($$SELECT * FROM tests.kw_block_drift()$$, '... straight into blocks that equal the postings');
SELECT is_empty($$SELECT * FROM tests.kw_stats_drift()$$, '... and statistics equal to a count over every chunk');

-- ---------------------------------------------------------------- fresh postings reach blocks without kw_compact
-- The chunk insert trigger files fresh postings into blocks (kw_flush) once
-- scirag.kw_flush_postings of them are waiting (default 20,000; 1 here).
SELECT tests.as_role('scirag_loader');
SELECT tests.add_zipf_docs('zv-', 1, 'public', 'src_z');
SELECT tests.as_role(NULL);
SELECT ok((SELECT count(*) FROM scirag.kw_postings) > 0, 'below the threshold new postings wait in kw_postings');
SELECT count(*) AS waiting FROM scirag.kw_postings \gset
SELECT tests.as_role('scirag_loader');
SELECT is(scirag.kw_flush(), :waiting::bigint, 'kw_flush moves every fresh posting and says how many');
SET LOCAL scirag.kw_flush_postings = '1';
SELECT tests.add_zipf_docs('zu-', 3, 'public', 'src_z');
SELECT tests.add_zipf_docs('zw-', 2, 'open_commercial', 'src_y');
RESET scirag.kw_flush_postings;
SELECT tests.as_role(NULL);
SELECT is((SELECT count(*) FROM scirag.kw_postings), 0::bigint,
  'past the threshold the insert itself files the new postings into blocks (no kw_compact)');
SELECT is_empty($$SELECT * FROM tests.kw_block_drift()$$, '... blocks hold exactly the postings, with true bounds');
SELECT is_empty(
  $$SELECT lexeme, license, source FROM scirag.kw_blocks GROUP BY 1, 2, 3
    HAVING count(*) FILTER (WHERE cardinality(chunk_ids) < 128) > 1
        OR max(block) <> count(*) - 1$$,
  '... appended after the existing blocks, numbered on, the last block filled up before a new one starts');
SELECT tests.as_role('scirag_reader');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, 'appended blocks: the reader''s pruned top n is exact');
SELECT tests.as_role('scirag_loader');
SELECT tests.all_classes();
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, '... and the loader''s');
RESET scirag.licenses;

-- ---------------------------------------------------------------- numpy scorer, and the same without PL/Python
-- search_keyword ranks with scirag.kw_top (numpy, scirag_helpers/bm25.py) where
-- PL/Python is in reach, else with scirag.kw_top_sql (PL/pgSQL): both exact.
SELECT tests.as_role(NULL);
SET LOCAL track_functions = 'pl';
SELECT tests.as_role('scirag_reader');
SELECT count(*) AS ignored FROM scirag.search_keyword('alpha bravo charlie', 10) \gset
SELECT tests.as_role(NULL);
SELECT ok((SELECT sum(calls) FROM pg_stat_xact_user_functions WHERE schemaname = 'scirag' AND funcname = 'kw_top') > 0
          AND NOT EXISTS (SELECT 1 FROM pg_stat_xact_user_functions WHERE schemaname = 'scirag' AND funcname = 'kw_top_sql'),
  'with PL/Python in reach the numpy scorer (kw_top) ranks, not the PL/pgSQL one');
SELECT ok((SELECT (t ->> 'postings_read')::int BETWEEN 1 AND (t ->> 'postings')::int
              AND (t ->> 'blocks_read')::int <= (t ->> 'blocks')::int
              AND (t ->> 'checked')::int >= 1 AND NOT (t ->> 'sql_fallback')::boolean
           FROM scirag.kw_top_trace() AS t),
  'kw_top_trace says what that call read and checked');
SELECT is(scirag.kw_top_trace(), NULL, '... once');
SELECT tests.as_role('scirag_reader');
SELECT throws_ok($$SELECT scirag.kw_top_trace()$$, '42501', NULL,
  '... and only to a superuser: the counts cover rows a reader cannot see');
SELECT tests.as_role(NULL);
REVOKE EXECUTE ON FUNCTION scirag.plpy_bootstrap() FROM PUBLIC, scirag_reader, scirag_loader, scirag_api;
SELECT tests.as_role('scirag_reader');
SELECT is_empty($$SELECT * FROM tests.kw_mismatches()$$, 'without PL/Python: the reader''s top n is still exact');
SELECT tests.as_role(NULL);
SELECT ok((SELECT sum(calls) FROM pg_stat_xact_user_functions WHERE schemaname = 'scirag' AND funcname = 'kw_top_sql') > 0,
  '... ranked by kw_top_sql');
GRANT EXECUTE ON FUNCTION scirag.plpy_bootstrap() TO scirag_reader, scirag_loader, scirag_api;
RESET track_functions;

-- ---------------------------------------------------------------- reference lists stay out by default
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('zref', 'public', 'src_z', ARRAY['quasar pulsar magnetar', 'quasar pulsar bibliography entry'],
                     ARRAY[tests.frame_vec(1), tests.frame_vec(2)]) AS zref \gset
SELECT chunk_id AS ref_chunk FROM tests.fx WHERE document_id = :zref AND ordinal = 2 \gset
UPDATE scirag.chunks SET is_reference = true WHERE id = :ref_chunk;
SELECT tests.as_role('scirag_reader');
SELECT ok(NOT :ref_chunk = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('quasar pulsar bibliography', 10))),
  'search_keyword leaves a reference-list chunk out by default');
SELECT ok(NOT :ref_chunk = ANY (ARRAY(SELECT chunk_id FROM scirag.search_vector(tests.frame_vec(2), 10))),
  'search_vector leaves a reference-list chunk out by default');
SET LOCAL scirag.include_references = 'on';
SELECT is((SELECT chunk_id FROM scirag.search_keyword('quasar pulsar bibliography', 10) ORDER BY rank LIMIT 1), :ref_chunk::bigint,
  'with scirag.include_references on, search_keyword finds it');
SELECT is((SELECT chunk_id FROM scirag.search_vector(tests.frame_vec(2), 10) ORDER BY rank LIMIT 1), :ref_chunk::bigint,
  '... and so does search_vector');
RESET scirag.include_references;

-- ---------------------------------------------------------------- errors and rights
SELECT tests.as_role('scirag_loader');
SELECT throws_ok($$SELECT scirag.kw_compact(parts => 0)$$, 'P0001',
  'kw_compact: parts must be at least 1, not 0', 'kw_compact rejects a partition count below 1, naming it');
SELECT tests.as_role('scirag_reader');
SELECT throws_ok($$SELECT scirag.kw_compact()$$, '42501', NULL, 'a reader cannot compact the index');
SELECT throws_ok($$SELECT scirag.kw_flush()$$, '42501', NULL, '... nor flush fresh postings into it');
SELECT throws_ok($$DELETE FROM scirag.kw_blocks$$, '42501', NULL, 'a reader cannot write blocks');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
