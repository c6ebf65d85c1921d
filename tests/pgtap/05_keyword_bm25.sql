-- The BM25 keyword layer (docs/threat-model.md, docs/retrieval.md): term statistics follow the
-- corpus through inserts, deletes and re-licensing; the scores a reader sees do not
-- depend on restricted text; questions are OR-ed; "phrases", -negation and stemming
-- work; no input raises; rare terms outweigh common ones.
BEGIN;
SELECT plan(36);
\ir helpers/fixtures.psql

-- Differences between the maintained index (postings, per-class document frequencies,
-- per-class chunk counts and lengths) and a rebuild from chunks.tsv. Run as the
-- session superuser (no row-level security), so it checks every class.
CREATE FUNCTION tests.kw_drift() RETURNS TABLE (what text, key text, have text, want text)
LANGUAGE sql STABLE AS $$
  WITH p AS (
    SELECT u.lexeme, c.id AS chunk_id, c.document_id, c.license::text AS license, c.source, c.retracted,
           coalesce(cardinality(u.positions), 1) AS tf,
           sum(coalesce(cardinality(u.positions), 1)) OVER (PARTITION BY c.id) AS dl
    FROM scirag.chunks c, unnest(c.tsv) AS u WHERE c.kind <> 'section'),
  want_df AS (SELECT license, source, lexeme, count(*)::bigint AS df FROM p GROUP BY 1, 2, 3),
  have_df AS (SELECT license::text, source, lexeme, df::bigint FROM scirag.kw_term_stats),
  want_cls AS (SELECT license, source, count(*)::bigint AS n, sum(dl)::bigint AS sdl
               FROM (SELECT DISTINCT chunk_id, license, source, dl FROM p) x GROUP BY 1, 2),
  have_cls AS (SELECT license::text, source, n_chunks AS n, sum_dl AS sdl FROM scirag.kw_class_stats),
  want_p AS (SELECT lexeme, chunk_id, document_id, license, source, retracted, tf, dl::int FROM p),
  have_p AS (SELECT lexeme, chunk_id, document_id, license::text, source, retracted, tf, dl FROM scirag.kw_postings)
  SELECT 'df', concat_ws('/', coalesce(h.license, w.license), coalesce(h.source, w.source), coalesce(h.lexeme, w.lexeme)),
         h.df::text, w.df::text
  FROM have_df h FULL JOIN want_df w ON (h.license, h.source, h.lexeme) = (w.license, w.source, w.lexeme)
  WHERE h.df IS DISTINCT FROM w.df
  UNION ALL
  SELECT 'class', concat_ws('/', coalesce(h.license, w.license), coalesce(h.source, w.source)),
         h.n || ' chunks, ' || h.sdl || ' long', w.n || ' chunks, ' || w.sdl || ' long'
  FROM have_cls h FULL JOIN want_cls w ON (h.license, h.source) = (w.license, w.source)
  WHERE (h.n, h.sdl) IS DISTINCT FROM (w.n, w.sdl)
  UNION ALL
  (SELECT 'posting only in index', x::text, NULL, NULL FROM (SELECT * FROM have_p EXCEPT SELECT * FROM want_p) x
   UNION ALL
   SELECT 'posting missing', x::text, NULL, NULL FROM (SELECT * FROM want_p EXCEPT SELECT * FROM have_p) x)
$$;

-- Snapshots of what a role saw, to compare before and after a change.
CREATE TABLE tests.scores (label text, chunk_id bigint, rank int, score float8);
CREATE TABLE tests.stats (label text, license text, source text, lexeme text, df int);
GRANT ALL ON tests.scores, tests.stats TO PUBLIC;
CREATE FUNCTION tests.snap_scores(label text, query text) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO tests.scores SELECT label, chunk_id, rank, score FROM scirag.search_keyword(query, 1000)
$$;
CREATE FUNCTION tests.snap_stats(label text) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO tests.stats SELECT label, license, source, lexeme, df FROM scirag.kw_term_stats
$$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA tests TO PUBLIC;
-- readers hold no privilege on kw_term_stats: read it as the reader API does (policies/reader_wall)
SELECT tests.through_api('tests.snap_stats(text)') AS _ \gset
-- ... and through the API the loader gets its session scope too: ask for every class
CREATE FUNCTION tests.all_classes() RETURNS void
LANGUAGE sql AS $$ SELECT set_config('scirag.licenses', 'public,open_commercial,open_noncommercial,restricted,unknown', true) $$;

-- ---------------------------------------------------------------- statistics follow the corpus
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('kb-1', 'public', 'src_kb', ARRAY['alpha beta', 'alpha gamma']) AS kb1 \gset
SELECT tests.add_doc('kb-2', 'restricted', 'src_kb', ARRAY['alpha delta']) AS kb2 \gset
SELECT tests.as_role(NULL);

SELECT results_eq(
  $$SELECT license::text, df FROM scirag.kw_term_stats WHERE source = 'src_kb' AND lexeme = 'alpha' ORDER BY 1$$,
  $$VALUES ('public', 2), ('restricted', 1)$$,
  'after inserts: df of "alpha" is counted per license class (section chunks not counted)');
SELECT results_eq(
  $$SELECT license::text, n_chunks, sum_dl FROM scirag.kw_class_stats WHERE source = 'src_kb' ORDER BY 1$$,
  $$VALUES ('public', 2::bigint, 4::bigint), ('restricted', 1::bigint, 2::bigint)$$,
  'after inserts: chunk counts and total lengths per class');
SELECT is_empty(
  $$SELECT p.* FROM scirag.kw_postings p JOIN scirag.chunks c ON c.id = p.chunk_id WHERE c.kind = 'section'$$,
  'section chunks (which repeat their children''s text) have no postings');
SELECT is_empty($$SELECT * FROM tests.kw_drift()$$, 'after inserts: postings and statistics equal a rebuild');

SELECT tests.as_role('scirag_loader');
DELETE FROM scirag.documents WHERE id = :kb1;
SELECT tests.as_role(NULL);
SELECT results_eq(
  $$SELECT license::text, df FROM scirag.kw_term_stats WHERE source = 'src_kb' AND lexeme = 'alpha' ORDER BY 1$$,
  $$VALUES ('restricted', 1)$$,
  'after a document DELETE: its class no longer counts "alpha"');
SELECT ok(NOT EXISTS (SELECT 1 FROM scirag.kw_class_stats WHERE source = 'src_kb' AND license = 'public')
          AND NOT EXISTS (SELECT 1 FROM scirag.kw_postings WHERE document_id = :kb1),
  'after a document DELETE: its postings and its emptied class are gone');
SELECT is_empty($$SELECT * FROM tests.kw_drift()$$, 'after a document DELETE: statistics equal a rebuild');

SELECT tests.as_role('scirag_loader');
UPDATE scirag.documents SET license = 'public' WHERE id = :kb2;
SELECT tests.as_role(NULL);
SELECT results_eq(
  $$SELECT license::text, lexeme, df FROM scirag.kw_term_stats WHERE source = 'src_kb' ORDER BY 1, 2$$,
  $$VALUES ('public', 'alpha', 1), ('public', 'delta', 1)$$,
  'after UPDATE of a document''s license: its statistics move to the new class');
SELECT ok(NOT EXISTS (SELECT 1 FROM scirag.chunks WHERE document_id = :kb2 AND license <> 'public')
          AND NOT EXISTS (SELECT 1 FROM scirag.kw_postings WHERE document_id = :kb2 AND license <> 'public'),
  '... and its chunks and postings carry the new license');
SELECT is_empty($$SELECT * FROM tests.kw_drift()$$, 'after a license UPDATE: statistics equal a rebuild');

SELECT tests.as_role('scirag_loader');
UPDATE scirag.documents SET source = 'src_kb_moved', retracted = true WHERE id = :kb2;
SELECT tests.add_doc('kb-3', 'open_commercial', 'src_kb', ARRAY['gamma delta epsilon', 'delta delta zeta']) AS kb3 \gset
DELETE FROM scirag.chunks WHERE document_id = :kb3 AND ordinal = 2;
SELECT tests.as_role(NULL);
SELECT is_empty($$SELECT * FROM tests.kw_drift()$$,
  'after a source/retraction UPDATE and a single-chunk DELETE: statistics equal a rebuild');

-- ---------------------------------------------------------------- restricted text does not move public scores
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('bm-1', 'public', 'src_bm', ARRAY[
  'straw yield rose sharply in the county',
  'wheat straw harvested early',
  'barley straw harvested late',
  'nitrogen fertiliser application rates',
  'crop residue removal reduces soil carbon',
  'residue from the crop was removed quickly',
  'scarce sample text',
  'ubiquitous sample text']) AS bm1 \gset
SELECT tests.add_doc('bm-2', 'public', 'src_bm',
  (SELECT array_agg(format('ubiquitous filler number %s', i) ORDER BY i) FROM generate_series(1, 12) i)) AS bm2 \gset
SELECT tests.all_classes();
SELECT tests.snap_scores('loader before', 'straw yield');
RESET scirag.licenses;

SELECT tests.as_role('scirag_reader');
SELECT tests.snap_scores('reader before', 'straw yield');
SELECT tests.snap_stats('reader before');

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('bm-secret', 'restricted', 'src_bm',
  (SELECT array_agg(format('straw yield straw yield secret %s', i) ORDER BY i) FROM generate_series(1, 10) i)) AS secret \gset
SELECT tests.add_doc('bm-secret-2', 'unknown', 'src_bm', ARRAY['straw straw straw', 'yield']) AS secret2 \gset
SELECT tests.all_classes();
SELECT tests.snap_scores('loader after', 'straw yield');
RESET scirag.licenses;

SELECT tests.as_role('scirag_reader');
SELECT tests.snap_scores('reader after', 'straw yield');
SELECT tests.snap_stats('reader after');

SELECT isnt_empty($$SELECT * FROM tests.scores WHERE label = 'reader before'$$,
  'setup: the reader finds public chunks for "straw yield"');
SELECT results_eq(
  $$SELECT chunk_id, rank, score FROM tests.scores WHERE label = 'reader after' ORDER BY rank$$,
  $$SELECT chunk_id, rank, score FROM tests.scores WHERE label = 'reader before' ORDER BY rank$$,
  'BM25 scores a reader sees are identical whether or not restricted documents with the query terms exist');
SELECT set_eq(
  $$SELECT license, source, lexeme, df FROM tests.stats WHERE label = 'reader after'$$,
  $$SELECT license, source, lexeme, df FROM tests.stats WHERE label = 'reader before'$$,
  'the term statistics a reader sees do not change when restricted text is added');
SELECT isnt_empty(
  $$SELECT chunk_id, score FROM tests.scores WHERE label = 'loader before'
    EXCEPT SELECT chunk_id, score FROM tests.scores WHERE label = 'loader after'$$,
  'control: the loader, who sees every class, does get different scores (the restricted text counts there)');

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('bm-public-more', 'public', 'src_bm', ARRAY['straw yield straw yield more']) AS more \gset
SELECT tests.as_role('scirag_reader');
SELECT tests.snap_scores('reader public added', 'straw yield');
SELECT isnt_empty(
  $$SELECT chunk_id, score FROM tests.scores WHERE label = 'reader before'
    EXCEPT SELECT chunk_id, score FROM tests.scores WHERE label = 'reader public added'$$,
  'control: adding public text with the query terms does change the reader''s scores');

-- ---------------------------------------------------------------- query syntax, as a reader
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('bm-num', 'public', 'src_bm', ARRAY['clustering ARI of 0.01 and -0.01 for the parse variant']) AS bmnum \gset
SELECT tests.as_role('scirag_reader');
CREATE TEMP TABLE bm AS SELECT ordinal, chunk_id FROM tests.fx WHERE external_id = 'bm-1';
SELECT chunk_id AS straw_yield FROM bm WHERE ordinal = 1 \gset
SELECT chunk_id AS wheat FROM bm WHERE ordinal = 2 \gset
SELECT chunk_id AS barley FROM bm WHERE ordinal = 3 \gset
SELECT chunk_id AS nitrogen FROM bm WHERE ordinal = 4 \gset
SELECT chunk_id AS residue_phrase FROM bm WHERE ordinal = 5 \gset
SELECT chunk_id AS residue_words FROM bm WHERE ordinal = 6 \gset
SELECT chunk_id AS scarce FROM bm WHERE ordinal = 7 \gset
SELECT chunk_id AS ubiquitous FROM bm WHERE ordinal = 8 \gset

SELECT set_has(
  $$SELECT chunk_id FROM scirag.search_keyword('how does nitrogen affect the straw yield of wheat?', 100)$$,
  format('VALUES (%s::bigint), (%s), (%s)', :nitrogen, :straw_yield, :wheat),
  'a natural-language question matches chunks that contain only some of its words (terms are OR-ed)');
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.search_keyword('"crop residue"', 100)$$,
  format('VALUES (%s::bigint)', :residue_phrase),
  '"crop residue" matches the phrase, not the same words apart');
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.search_keyword('soil carbon "crop residue" removed', 100)$$,
  format('VALUES (%s::bigint)', :residue_phrase),
  'with other words around it, a quoted phrase is still required');
SELECT ok(
  :wheat = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('straw -barley', 100)))
  AND NOT :barley = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('straw -barley', 100))),
  '-barley excludes chunks containing barley, other straw chunks stay');
SELECT ok(
  EXISTS (SELECT 1 FROM scirag.search_keyword('the parse variant scores -0.01 ARI', 100) k
          JOIN tests.fx f ON f.chunk_id = k.chunk_id WHERE f.external_id = 'bm-num'),
  'a negative number ("-0.01" in a claim) is a term, not a negation: the chunk holding 0.01 and -0.01 stays');
SELECT ok(
  :straw_yield = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('yields', 100)))
  AND :wheat = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('harvesting', 100))),
  'stemming: "yields" finds "yield", "harvesting" finds "harvested"');
SELECT is(tests.try_count($$SELECT * FROM scirag.search_keyword('the of and to is it were', 100)$$), '0',
  'a stop-word-only query returns no rows and raises nothing');
SET LOCAL client_min_messages = warning;  -- to_tsquery's "no lexemes" notices
SELECT lives_ok(
  $$SELECT count(*) FROM unnest(ARRAY['straw & yield', 'straw | yield', '!straw', 'straw <-> yield', 'straw <2> yield',
      'stra:*', 'straw:A', '(straw', 'straw)', '((', '"straw', 'straw"yield"', '""', '"', '-', '- -', '--straw',
      '-"straw yield"', '\', '''', ':', '&|!<->:*()', 'straw & !', '-straw', E'straw\tyield', '', '   ',
      repeat('straw ', 666)]) AS q,
      LATERAL scirag.search_keyword(q, 10)$$,
  'tsquery operators, unbalanced quotes and parentheses, stray punctuation, 3,996 characters: nothing raises');
-- Called directly (not through retrieve), the layers bound what a caller may ask for.
SELECT ok((SELECT count(*) FROM scirag.search_keyword(repeat('straw ', 666) || 'yiel', 10)) > 0,
  'a query of exactly 4,000 characters is searched');
SELECT throws_ok($$SELECT * FROM scirag.search_keyword(repeat('straw ', 666) || 'yield', 10)$$, '22023',
  'scirag.search_keyword: the question is 4001 characters long, at most 4000 allowed',
  'search_keyword refuses a query over 4,000 characters, naming itself and the bound');
SELECT throws_ok($$SELECT * FROM scirag.search_keyword('straw', 1001)$$, '22023',
  'scirag.search_keyword: n must be at most 1000 (got 1001)', 'search_keyword refuses n over 1,000');
SELECT is((SELECT count(*) FROM scirag.search_keyword('straw', 1000)), (SELECT count(*) FROM scirag.search_keyword('straw', 100)),
  '... n = 1,000 is searched');
SELECT throws_ok($$SELECT * FROM scirag.search_vector(tests.frame_vec(1), 1001)$$, '22023',
  'scirag.search_vector: n must be at most 1000 (got 1001)', 'search_vector refuses n over 1,000');
SELECT is(
  (SELECT chunk_id FROM scirag.search_keyword('straw & (yield | !county) <-> :*', 10) ORDER BY rank LIMIT 1),
  :straw_yield::bigint,
  'operator characters are read as text: the words around them still match');
SELECT ok(
  :straw_yield = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('"straw yield', 10)))
  AND :wheat = ANY (ARRAY(SELECT chunk_id FROM scirag.search_keyword('"straw yield', 10))),
  'an unbalanced quote is ignored: its words still match (no phrase is required)');
SELECT ok(
  (SELECT rank FROM scirag.search_keyword('ubiquitous scarce', 100) WHERE chunk_id = :scarce)
  < (SELECT rank FROM scirag.search_keyword('ubiquitous scarce', 100) WHERE chunk_id = :ubiquitous),
  'a chunk with the rare query term ranks above an equally long one with only the common term');
SELECT ok(
  (SELECT rank FROM scirag.search_keyword('crop residue', 100) WHERE chunk_id = :residue_phrase)
  < (SELECT rank FROM scirag.search_keyword('crop residue', 100) WHERE chunk_id = :residue_words),
  'proximity: the chunk with "crop residue" as neighbours outranks the shorter one with the words apart');
SELECT ok(
  (SELECT rank FROM scirag.search_keyword('crop residue', 100, proximity => 0) WHERE chunk_id = :residue_phrase)
  > (SELECT rank FROM scirag.search_keyword('crop residue', 100, proximity => 0) WHERE chunk_id = :residue_words),
  '... control: with proximity => 0, plain BM25 prefers the shorter chunk');
SELECT tests.as_role(NULL);
UPDATE scirag.settings SET value = '0' WHERE key = 'bm25_proximity';
SELECT tests.as_role('scirag_reader');
SELECT is(ARRAY(SELECT chunk_id FROM scirag.search_keyword('crop residue', 100) ORDER BY rank),
          ARRAY(SELECT chunk_id FROM scirag.search_keyword('crop residue', 100, proximity => 0) ORDER BY rank),
  '... and the setting bm25_proximity 0 is the same as the argument 0');
SELECT ok(
  tests.api_text(format($$SELECT abs(k.score - ln(1 + (s.n - 1 + 0.5) / (1 + 0.5)) * 1 * (c.k1 + 1)
                          / (1 + c.k1 * (1 - c.b + c.b * p.dl / s.avgdl))) < 1e-9
   FROM scirag.search_keyword('scarce', 10) k
   JOIN scirag.kw_postings p ON p.chunk_id = k.chunk_id AND p.lexeme = 'scarc'
   CROSS JOIN (SELECT sum(n_chunks)::float8 AS n, sum(sum_dl)::float8 / sum(n_chunks) AS avgdl
               FROM scirag.kw_class_stats) s
   CROSS JOIN (SELECT max(value) FILTER (WHERE key = 'bm25_k1')::float8 AS k1,
                      max(value) FILTER (WHERE key = 'bm25_b')::float8 AS b FROM scirag.settings) c
   WHERE k.chunk_id = %s$$, :scarce)) = 'true',
  'the score is BM25 (settings bm25_k1, bm25_b) over the statistics of the reader''s scope (df 1, tf 1)');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
