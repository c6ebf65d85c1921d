-- Parent-context enrichment (scirag.enrich_chunks, VulcanLab retrieval step 3), with
-- the reference's worked examples 1 (parent traversal) and 2 (sliding window).
BEGIN;
SELECT plan(26);
\ir helpers/fixtures.psql
\ir deep_fixtures.psql

SELECT tests.as_role('scirag_loader');

-- ---------------------------------------------------------------- Example 1 fixture
-- Chunk A (50 words) in section B (200 words, A included) in section C (400 words,
-- B included), laid out as the loader writes a document: each section chunk holds
-- its heading and the whole text under it.
SELECT tests.deep_doc('ex1') AS d1 \gset
SELECT tests.deep_chunk(:d1, 0, NULL, 'section', 'Chapter',
  'Chapter' || E'\n\n' || tests.words('ci', 199) || E'\n\n' ||
  'Methods' || E'\n\n' || tests.words('aa', 50) || E'\n\n' || tests.words('bt', 149), 1, 40) AS c_id \gset
SELECT tests.deep_chunk(:d1, 1, 0, 'prose', NULL, tests.words('ci', 199), 3, 12) AS intro_id \gset
SELECT tests.deep_chunk(:d1, 2, 0, 'section', 'Methods',
  'Methods' || E'\n\n' || tests.words('aa', 50) || E'\n\n' || tests.words('bt', 149), 14, 40) AS b_id \gset
SELECT tests.deep_chunk(:d1, 3, 2, 'prose', NULL, tests.words('aa', 50), 16, 18) AS a_id \gset
SELECT tests.deep_chunk(:d1, 4, 2, 'prose', NULL, tests.words('bt', 149), 20, 40) AS tail_id \gset

-- A parent that does not repeat its child (as another loader might write it), under
-- a grandparent: B' alone (200 words) is short of 250, B' + A' (250) is not.
SELECT tests.deep_doc('ex1b') AS d1b \gset
SELECT tests.deep_chunk(:d1b, 0, NULL, 'section', 'Book', 'Book' || E'\n\n' || tests.words('gb', 500)) AS g2_id \gset
SELECT tests.deep_chunk(:d1b, 1, 0, 'section', 'Methods', 'Methods' || E'\n\n' || tests.words('bb', 199)) AS b2_id \gset
SELECT tests.deep_chunk(:d1b, 2, 1, 'prose', NULL, tests.words('ab', 50)) AS a2_id \gset

-- A chain that is short all the way up, and a short chunk with nothing above it.
SELECT tests.deep_doc('ex1c') AS d1c \gset
SELECT tests.deep_chunk(:d1c, 0, NULL, 'section', 'Note', 'Note' || E'\n\n' || tests.words('nn', 30)) AS r_id \gset
SELECT tests.deep_chunk(:d1c, 1, 0, 'prose', NULL, tests.words('nn', 30)) AS short_id \gset
SELECT tests.deep_chunk(:d1c, 2, NULL, 'prose', NULL, tests.words('oo', 40)) AS orphan_id \gset

SELECT is(ARRAY[scirag.word_count(tests.body(:a_id)), scirag.word_count(tests.body(:b_id)), scirag.word_count(tests.body(:c_id))],
          ARRAY[50, 200, 400], 'fixture: A has 50 words, its parent B 200, its grandparent C 400');

-- ---------------------------------------------------------------- Example 1
SELECT is((SELECT depth FROM scirag.enrich_chunks(ARRAY[:a_id]::bigint[], 150)), 1,
          'Example 1: A (50 words) walks one hop: B''s 200 words reach min_word_count 150');
SELECT is((SELECT content FROM scirag.enrich_chunks(ARRAY[:a_id]::bigint[], 150)),
          (SELECT content FROM scirag.chunks WHERE id = :b_id),
          'Example 1: the context is the full content of parent B (which contains A)');
SELECT is((SELECT ROW(enriched, reached_root)::text FROM scirag.enrich_chunks(ARRAY[:a_id]::bigint[], 150)), '(t,f)',
          'Example 1: A is enriched and the walk stopped before the root');
SELECT is((SELECT ROW(depth, content = (SELECT content FROM scirag.chunks WHERE id = :c_id), reached_root)::text
           FROM scirag.enrich_chunks(ARRAY[:a_id]::bigint[], 250)), '(2,t,f)',
          'min_word_count 250: B falls short, grandparent C (400 words) is used, depth 2');
SELECT is((SELECT ROW(depth, content = (SELECT content FROM scirag.chunks WHERE id = :c_id), reached_root, enriched)::text
           FROM scirag.enrich_chunks(ARRAY[:a_id]::bigint[], 500)), '(2,t,t,t)',
          'min_word_count 500: the walk reaches the root without meeting it; the root is used (reached_root)');
SELECT is((SELECT ROW(depth, content = (SELECT content FROM scirag.chunks WHERE id = :intro_id), enriched, reached_root)::text
           FROM scirag.enrich_chunks(ARRAY[:intro_id]::bigint[], 150)), '(0,t,f,f)',
          'a chunk that already has min_word_count words is left as it is');
SELECT is((SELECT ROW(depth, scirag.word_count(body),
                      strpos(content, tests.body(:a2_id)) > 0, strpos(content, tests.body(:b2_id)) > 0)::text
           FROM scirag.enrich_chunks(ARRAY[:a2_id]::bigint[], 250)), '(1,250,t,t)',
          'a parent that does not repeat its child: combined content = parent + chunk = 250 words');
SELECT is((SELECT ROW(depth, reached_root, enriched, content = (SELECT content FROM scirag.chunks WHERE id = :orphan_id))::text
           FROM scirag.enrich_chunks(ARRAY[:orphan_id]::bigint[], 150)), '(0,t,f,t)',
          'a short chunk with no parent falls back to itself (reached_root, not enriched)');
SELECT is(ARRAY(SELECT chunk_id FROM scirag.enrich_chunks(ARRAY[:intro_id, :a_id, :a_id, -1, NULL]::bigint[])),
          ARRAY[:intro_id, :a_id]::bigint[], 'input order is kept, duplicates, NULLs and unknown ids are dropped');

-- ---------------------------------------------------------------- metrics
SELECT is(scirag.enrichment_metrics(ARRAY[:a_id, :intro_id, :orphan_id, :short_id]::bigint[], 150),
          '{"chunks": 4, "enriched_count": 2, "enrichment_percentage": 50.00, "average_traversal_depth": 1.000,
            "traversal_reached_root_count": 1, "fallback_count": 1}'::jsonb,
          'enrichment metrics: percentage, average depth, reached-root and fallback counts');
SELECT is((SELECT jsonb_build_object(
             'enrichment_percentage', round(100.0 * count(*) FILTER (WHERE enriched) / count(*), 2),
             'traversal_reached_root_count', count(*) FILTER (WHERE reached_root AND enriched),
             'fallback_count', count(*) FILTER (WHERE reached_root AND NOT enriched))
           FROM scirag.enrich_chunks(ARRAY[:a_id, :intro_id, :orphan_id, :short_id]::bigint[], 150)),
          scirag.enrichment_metrics(ARRAY[:a_id, :intro_id, :orphan_id, :short_id]::bigint[], 150)
            - 'chunks' - 'enriched_count' - 'average_traversal_depth',
          'the metrics are aggregates of enrich_chunks'' own columns (the lead can take them from the rows)');
SELECT is(scirag.enrichment_metrics('{}'),
          '{"chunks": 0, "enriched_count": 0, "enrichment_percentage": 0, "average_traversal_depth": 0,
            "traversal_reached_root_count": 0, "fallback_count": 0}'::jsonb, 'metrics of nothing are zeros');
SELECT throws_ok($$SELECT * FROM scirag.enrich_chunks('{1}', -1)$$, '22023', NULL, 'a negative min_word_count is refused');

-- ---------------------------------------------------------------- Example 2 fixture
-- Chunk A (50 words) in section "Yield" (99 words) in section "Results" C (1000 words:
-- 500 words of prose before "Yield", 399 after it under "Moisture"). With
-- min_word_count 150 the walk reaches C, which max_word_count 750 must cut.
SELECT tests.deep_doc('ex2') AS d2 \gset
SELECT tests.deep_chunk(:d2, 0, NULL, 'section', 'Results',
  'Results' || E'\n\n' || tests.words('pa', 500) || E'\n\n' ||
  'Yield' || E'\n\n' || tests.words('aa', 50) || E'\n\n' || tests.words('qq', 48) || E'\n\n' ||
  'Moisture' || E'\n\n' || tests.words('pb', 399), 1, 100) AS c2_id \gset
SELECT tests.deep_chunk(:d2, 1, 0, 'prose', NULL, tests.words('pa', 500), 3, 40) AS p1_id \gset
SELECT tests.deep_chunk(:d2, 2, 0, 'section', 'Yield',
  'Yield' || E'\n\n' || tests.words('aa', 50) || E'\n\n' || tests.words('qq', 48), 42, 50) AS y_id \gset
SELECT tests.deep_chunk(:d2, 3, 2, 'prose', NULL, tests.words('aa', 50), 44, 46) AS a3_id \gset
SELECT tests.deep_chunk(:d2, 4, 2, 'prose', NULL, tests.words('qq', 48), 48, 50) AS q_id \gset
SELECT tests.deep_chunk(:d2, 5, 0, 'section', 'Moisture', 'Moisture' || E'\n\n' || tests.words('pb', 399), 52, 100) AS m_id \gset
SELECT tests.deep_chunk(:d2, 6, 5, 'prose', NULL, tests.words('pb', 399), 54, 100) AS p2_id \gset

CREATE TEMP TABLE ex2 AS
SELECT e.* FROM scirag.enrich_chunks(ARRAY[:a3_id]::bigint[], 150, 750) e;
GRANT SELECT ON ex2 TO PUBLIC;

SELECT is(scirag.word_count(tests.body(:c2_id)), 1000, 'fixture: grandparent C has 1000 words');
SELECT is((SELECT content FROM ex2), (SELECT E'Deep fixture ex2\nResults\n\n' || body FROM ex2),
          'enrich_chunks returns the body with the content: the content is the section''s prefix and the body');
SELECT is((SELECT ROW(depth, enriched, reached_root)::text FROM ex2), '(2,t,f)',
          'Example 2: the walk reaches grandparent C (depth 2)');
SELECT cmp_ok((SELECT scirag.word_count(content) FROM ex2), '<=', 750,
              'Example 2: the enriched content (prefix included) has at most 750 words');
SELECT cmp_ok((SELECT scirag.word_count(content) FROM ex2), '>=', 730,
              'Example 2: ... and the window is filled up to the budget (within one sentence a side)');
SELECT ok((SELECT strpos(body, E'Results\n\n') = 1 AND strpos(body, E'\n\nYield\n\n') > 0
                  AND strpos(body, E'\n\nMoisture\n\n') > 0 FROM ex2),
          'Example 2: every heading of C is kept');
SELECT ok((SELECT strpos(body, tests.body(:a3_id)) > 0 FROM ex2), 'Example 2: the original chunk is kept intact');
SELECT is_empty(
  $$SELECT p FROM ex2, regexp_split_to_table(ex2.body, E'\n\n') AS p
    WHERE p NOT IN ('Results', 'Yield', 'Moisture', '[…]')
      AND NOT (btrim(replace(p, '[…]', '')) ~ '^[A-Z][a-z]+[0-9]+ .*[0-9]\.$'
               AND strpos(tests.body((SELECT c.id FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
                                      WHERE d.external_id = 'ex2' AND c.ordinal = 0)),
                          btrim(replace(p, '[…]', ''))) > 0)$$,
  'Example 2: every kept passage is C''s own text from a sentence start to a sentence end');
SELECT ok((SELECT strpos(body, 'Pa491 pa492') > 0 AND strpos(body, 'Pa1 pa2 ') = 0 FROM ex2),
          'Example 2: context before the chunk is taken nearest first (the start of C''s long intro is cut)');
SELECT ok((SELECT strpos(body, tests.body(:q_id)) > 0 AND strpos(body, 'Pb1 pb2 ') > 0 AND strpos(body, 'Pb391') = 0 FROM ex2),
          'Example 2: context after the chunk is taken nearest first (the end of "Moisture" is cut)');
SELECT ok((SELECT body ~ E'^Results\n\n\\[…\\]\n\nPa' AND body ~ E'\\. \\[…\\]$' FROM ex2),
          'Example 2: omissions are marked [...]');
SELECT is((SELECT content FROM scirag.enrich_chunks(ARRAY[:a3_id]::bigint[], 150, 2000)),
          (SELECT content FROM scirag.chunks WHERE id = :c2_id),
          'with max_word_count above C''s length nothing is cut');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
