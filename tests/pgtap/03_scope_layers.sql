-- "Every layer filters before ranking" (docs/threat-model.md). Twenty out-of-scope
-- chunks (restricted license, another source, an excluded document, a retracted
-- document) match the query better than five in-scope ones, in both the dense and
-- the keyword sense; with k = 5 every layer must still return exactly the five.
-- Outside the transaction, before it: clear the HNSW index of the entries that
-- earlier (rolled back) test runs left in it, so that this run's fixtures join a
-- clean graph (see the index-health check below). Maintenance only: no data changes.
VACUUM (SKIP_LOCKED) scirag.chunks;
BEGIN;
SELECT plan(25);
\ir helpers/fixtures.psql

-- ---------------------------------------------------------------- fixtures
-- Query: tests.frame_vec(0) and the words "zephyr lattice". A chunk at angle a from
-- it has cosine distance 1 - cosd(a): out-of-scope chunks sit at 1..20 degrees,
-- in-scope ones at 41..45. Out-of-scope text repeats both query words in a short
-- chunk; in-scope text has each once in a long chunk: BM25 prefers the former.
-- (The frame is random per run, see helpers/fixtures.psql.)
CREATE TABLE tests.qv AS SELECT tests.frame_vec(0) AS q, tests.frame_vec(3) AS q2;
GRANT SELECT ON tests.qv TO PUBLIC;
SELECT q::text AS q FROM tests.qv \gset
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('sl-in', 'public', 'src_main',
  (SELECT array_agg(format('zephyr lattice note %s with several unrelated filler words about other matters entirely', i) ORDER BY i)
   FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(40 + i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'in') AS doc_in \gset
SELECT tests.add_doc('sl-restricted', 'restricted', 'src_main',
  (SELECT array_agg(format('zephyr lattice zephyr lattice report %s', i) ORDER BY i) FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'out') AS doc_restricted \gset
SELECT tests.add_doc('sl-source', 'public', 'src_other',
  (SELECT array_agg(format('zephyr lattice zephyr lattice report %s', i) ORDER BY i) FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(5 + i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'out') AS doc_source \gset
SELECT tests.add_doc('sl-excluded', 'public', 'src_main',
  (SELECT array_agg(format('zephyr lattice zephyr lattice excludium report %s', i) ORDER BY i) FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(10 + i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'out') AS doc_excluded \gset
SELECT tests.add_doc('sl-retracted', 'public', 'src_main',
  (SELECT array_agg(format('zephyr lattice zephyr lattice report %s', i) ORDER BY i) FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(15 + i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  retracted => true, tag => 'out') AS doc_retracted \gset

-- For the iterative-scan test, around tests.frame_vec(3): 300 restricted chunks near the query
-- (1..30 degrees) and 20 in-scope chunks far from it (51..70 degrees). 300 is more
-- than search_vector's hnsw.ef_search (200): one plain HNSW pass would find none.
SELECT tests.add_doc('sl-near', 'restricted', 'src_main',
  (SELECT array_agg('near row ' || i ORDER BY i) FROM generate_series(1, 300) i),
  (SELECT array_agg(tests.fvec(1 + (i % 30), i * 37, 1) ORDER BY i) FROM generate_series(1, 300) i),
  tag => 'near', with_section => false) AS doc_near \gset
SELECT tests.add_doc('sl-far', 'public', 'src_main',
  (SELECT array_agg('far row ' || i ORDER BY i) FROM generate_series(1, 20) i),
  (SELECT array_agg(tests.fvec(50 + i, i * 17, 1) ORDER BY i) FROM generate_series(1, 20) i),
  tag => 'far', with_section => false) AS doc_far \gset

-- ---------------------------------------------------------------- controls (loader sees all)
-- Through the reader API the loader, too, gets its session scope within its ceiling
-- (policies/reader_wall): ask for every class it may see.
SET LOCAL scirag.licenses = 'public, open_commercial, open_noncommercial, restricted, unknown';
-- Exact nearest neighbours ("+ 0" keeps the HNSW index out): the fixture geometry itself.
SELECT set_eq(
  format($$SELECT id FROM scirag.chunks WHERE embedding IS NOT NULL
           ORDER BY (embedding OPERATOR(public.<=>) %L::public.vector) + 0 LIMIT 20$$, :'q'),
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'out' AND kind <> 'section'$$,
  'control: unscoped, the 20 nearest chunks are the 20 out-of-scope ones');
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.search_keyword('zephyr lattice', 20)$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'out' AND kind <> 'section'$$,
  'control: unscoped, the 20 best BM25 chunks are the 20 out-of-scope ones');

-- ---------------------------------------------------------------- as a reader with a narrow scope
RESET scirag.licenses;
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.sources = 'src_main';
-- by numeric id here; exclusion by manifest id is asserted on its own below
SELECT set_config('scirag.exclude_documents', :'doc_excluded', true) IS NOT NULL AS _ \gset
SET LOCAL scirag.exclude_retracted = 'on';

SELECT results_eq(
  $$SELECT chunk_id FROM scirag.search_vector((SELECT q FROM tests.qv), 5) ORDER BY rank$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'in' AND kind <> 'section' ORDER BY ordinal$$,
  'search_vector(q, 5) returns exactly the five in-scope chunks, nearest first');
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.search_keyword('zephyr lattice', 5)$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'in' AND kind <> 'section'$$,
  'search_keyword(q, 5) returns exactly the five in-scope chunks');
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.retrieve('zephyr lattice', k => 5, query_embedding => (SELECT q FROM tests.qv),
                                          options => '{"depth": 5}')$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'in' AND kind <> 'section'$$,
  'retrieve(k => 5, depth 5) returns exactly the five in-scope chunks');
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.retrieve('zephyr lattice', k => 5, query_embedding => (SELECT q FROM tests.qv))$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'in' AND kind <> 'section'$$,
  'retrieve(k => 5) with the profile depth returns exactly the five in-scope chunks');

SELECT is_empty(
  $$SELECT v.chunk_id FROM scirag.search_vector((SELECT q FROM tests.qv), 1000) v
    JOIN tests.fx f USING (chunk_id) WHERE f.tag IN ('out', 'near')$$,
  'search_vector: no out-of-scope chunk at any depth');
SELECT is_empty(
  $$SELECT k.chunk_id FROM scirag.search_keyword('zephyr lattice report excludium near row', 1000) k
    JOIN tests.fx f USING (chunk_id) WHERE f.tag IN ('out', 'near')$$,
  'search_keyword: no out-of-scope chunk at any depth');
SELECT is_empty(
  $$SELECT r.chunk_id FROM scirag.retrieve('zephyr lattice report excludium near row', k => 1000,
                                            query_embedding => (SELECT q FROM tests.qv)) r
    JOIN tests.fx f USING (chunk_id) WHERE f.tag IN ('out', 'near')$$,
  'retrieve: no out-of-scope chunk at any depth');

-- ---------------------------------------------------------------- an excluded document is unreachable
SELECT is_empty(
  format($$SELECT v.chunk_id FROM scirag.search_vector(%L::public.vector, 1000) v
           JOIN tests.fx f USING (chunk_id) WHERE f.external_id = 'sl-excluded'$$, tests.fvec(11, 50, 0)),
  'excluded document: not found by search_vector even with its own embedding as the query');
SELECT is_empty(
  $$SELECT * FROM scirag.search_keyword('excludium', 100)$$,
  'excluded document: not found by search_keyword with a word only it contains');
SELECT is_empty(
  format($$SELECT r.chunk_id FROM scirag.retrieve('excludium', k => 100, query_embedding => %L::public.vector) r
           WHERE r.external_id = 'sl-excluded' OR r.citation->>'external_id' = 'sl-excluded'$$, tests.fvec(11, 50, 0)),
  'excluded document: not returned or cited by retrieve');
SELECT ok(
  tests.api_count($$SELECT 1 FROM scirag.documents WHERE external_id = 'sl-excluded'$$) = '0'
  AND tests.api_count(format('SELECT 1 FROM scirag.chunks WHERE document_id = %s', :doc_excluded)) = '0'
  AND tests.api_count(format('SELECT 1 FROM scirag.kw_postings WHERE document_id = %s', :doc_excluded)) = '0'
  AND tests.api_count($$SELECT 1 FROM scirag.documents WHERE external_id = 'sl-in'$$) = '1',
  'excluded document: no row of it in documents, chunks or kw_postings');

RESET scirag.exclude_documents;
SELECT is(
  (SELECT count(*)::int FROM scirag.search_keyword('excludium', 100)),
  5,
  'control: without the exclusion the reader finds the document''s five chunks');
-- by manifest id, with the documents lookup on its indexes as on a real corpus
-- (on this near-empty table the planner would otherwise pick a sequential scan)
SET LOCAL scirag.exclude_documents = 'sl-excluded';
SET LOCAL enable_seqscan = off;
SELECT is(
  tests.try_count($$SELECT * FROM scirag.search_keyword('excludium', 100)$$),
  '0',
  'a document excluded by its manifest id is unreachable too (and the query does not raise)');
RESET enable_seqscan;
SELECT set_config('scirag.exclude_documents', :'doc_excluded', true) IS NOT NULL AS _ \gset

-- ---------------------------------------------------------------- empty scope: nothing, and no model call
SET LOCAL scirag.licenses = '';
SELECT is_empty(
  $$SELECT * FROM scirag.retrieve('zephyr lattice', k => 5)$$,
  'licenses = '''': retrieve returns nothing');
SELECT ok(scirag.last_trace() IS NOT NULL AND tests.trace_stage('embed') IS NULL,
  'licenses = '''': the trace has no embed stage (no embedding call)');
SELECT ok(scirag.last_trace()->>'scope' = 'empty'
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(scirag.last_trace()->'stages') s
                          WHERE s->>'status' <> 'skipped'),
  'licenses = '''': the trace says the scope is empty and every stage was skipped');
SELECT ok(
  NOT EXISTS (SELECT 1 FROM scirag.search_vector((SELECT q FROM tests.qv), 100))
  AND NOT EXISTS (SELECT 1 FROM scirag.search_keyword('zephyr lattice', 100)),
  'licenses = '''': search_vector and search_keyword return nothing either');
RESET scirag.licenses;
SELECT count(*) AS n_control FROM scirag.retrieve('zephyr lattice', k => 5) \gset
SELECT ok(:n_control = 5 AND tests.trace_stage('embed') IS NOT NULL,
  'control: with a non-empty scope and no query_embedding, retrieve answers and does try to embed');

-- ---------------------------------------------------------------- a narrow scope still gets n rows
SELECT tests.as_role('scirag_loader');
SELECT set_eq(
  $$SELECT id FROM scirag.chunks WHERE embedding IS NOT NULL
    ORDER BY (embedding OPERATOR(public.<=>) (SELECT q2 FROM tests.qv)) + 0 LIMIT 300$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'near'$$,
  'control: unscoped, the 300 nearest chunks around the second query are all restricted');

-- Health of the HNSW index itself. Test runs roll back, but their index entries stay
-- in the graph until VACUUM; when many runs pile up before (auto)vacuum, a new
-- run's tight cluster of fixture vectors can end up cut off from the graph, and then
-- no role finds it through the index. The index-path assertions below are skipped in
-- that state (a test-environment artefact, reported as a skip, not as a failure).
-- The check: unscoped, with search_vector's own settings, the index must reach all
-- 320 rows of the cluster.
SELECT tests.as_role(NULL);
SET LOCAL enable_seqscan = off;
SET LOCAL hnsw.iterative_scan = relaxed_order;
SET LOCAL hnsw.ef_search = 200;
SELECT count(*) = 320 AS hnsw_ok FROM (
  SELECT id FROM scirag.chunks WHERE embedding IS NOT NULL
  ORDER BY embedding OPERATOR(public.<=>) (SELECT q2 FROM tests.qv) LIMIT 320) x
  JOIN tests.fx f ON f.chunk_id = x.id AND f.tag IN ('near', 'far') \gset
RESET hnsw.ef_search;
RESET hnsw.iterative_scan;
RESET enable_seqscan;
\if :hnsw_ok
\else
SELECT diag('the HNSW index cannot reach this run''s rows (unvacuumed entries of earlier runs): '
            'index-path assertions skipped; VACUUM scirag.chunks and re-run');
\endif

SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.sources = 'src_main';
SET LOCAL enable_seqscan = off;
SELECT pg_stat_get_xact_numscans('scirag.chunks_embedding_hnsw'::regclass) AS scans_before \gset
SELECT CASE WHEN :'hnsw_ok'::boolean THEN results_eq(
  $$SELECT chunk_id FROM scirag.search_vector((SELECT q2 FROM tests.qv), 20) ORDER BY rank$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'far' ORDER BY ordinal$$,
  'index scan: 300 nearer out-of-scope rows, 20 eligible far rows: search_vector(q, 20) returns all 20, nearest first')
  ELSE skip('HNSW index degraded by unvacuumed entries', 1) END;
SELECT CASE WHEN :'hnsw_ok'::boolean THEN cmp_ok(pg_stat_get_xact_numscans('scirag.chunks_embedding_hnsw'::regclass), '>', :scans_before::bigint,
  '... and it read the HNSW index (iterative scan)')
  ELSE skip('HNSW index degraded by unvacuumed entries', 1) END;
RESET enable_seqscan;
SELECT CASE WHEN :'hnsw_ok'::boolean THEN results_eq(
  $$SELECT chunk_id FROM scirag.search_vector((SELECT q2 FROM tests.qv), 20) ORDER BY rank$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'far' ORDER BY ordinal$$,
  'default planner: search_vector(q, 20) returns all 20 eligible rows')
  ELSE skip('HNSW index degraded by unvacuumed entries', 1) END;
-- At scale the out-of-scope neighbours can outnumber what one iterative scan may
-- visit (hnsw.max_scan_tuples, 20000 by default); a cap of 100 here stands for
-- "more than 20000 nearer restricted chunks" in a real corpus.
SET LOCAL enable_seqscan = off;
SET LOCAL hnsw.max_scan_tuples = 100;
SELECT CASE WHEN :'hnsw_ok'::boolean THEN results_eq(
  $$SELECT chunk_id FROM scirag.search_vector((SELECT q2 FROM tests.qv), 20) ORDER BY rank$$,
  $$SELECT chunk_id FROM tests.fx WHERE tag = 'far' ORDER BY ordinal$$,
  'search_vector still returns the 20 eligible rows when out-of-scope neighbours exceed the iterative scan cap')
  ELSE skip('HNSW index degraded by unvacuumed entries', 1) END;
RESET hnsw.max_scan_tuples;
RESET enable_seqscan;

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
