-- Layers and answer called directly, not through retrieve (issue 13): a question over
-- 4,000 characters and a size argument (n) over 1,000 are refused with SQLSTATE 22023
-- and a message naming the function and the bound, before any Python runs; the bound
-- itself is accepted. The checks live in scirag.check_question and scirag.check_limit.
BEGIN;
SELECT plan(14);
\ir helpers/fixtures.psql

CREATE TABLE tests.bq AS SELECT tests.frame_vec(0) AS q;
GRANT SELECT ON tests.bq TO PUBLIC;
SELECT q::text AS q FROM tests.bq \gset
SELECT tests.as_role('scirag_reader');

SELECT throws_ok($$SELECT * FROM scirag.search_graph(repeat('a', 4001), 10)$$, '22023',
  'scirag.search_graph: the question is 4001 characters long, at most 4000 allowed',
  'search_graph refuses a question over 4,000 characters');
SELECT lives_ok($$SELECT * FROM scirag.search_graph(repeat('a', 4000), 10)$$, 'search_graph takes 4,000 characters');
SELECT throws_ok($$SELECT * FROM scirag.search_graph('straw', 1001)$$, '22023',
  'scirag.search_graph: n must be at most 1000 (got 1001)', 'search_graph refuses n over 1,000');
SELECT lives_ok($$SELECT * FROM scirag.search_graph('straw', 1000)$$, 'search_graph takes n = 1000');

SELECT throws_ok($$SELECT * FROM scirag.search_hyde(repeat('a', 4001), 10)$$, '22023',
  'scirag.search_hyde: the question is 4001 characters long, at most 4000 allowed',
  'search_hyde refuses a question over 4,000 characters (before the probe passage is written)');
SELECT throws_ok($$SELECT * FROM scirag.search_hyde('straw', 1001)$$, '22023',
  'scirag.search_hyde: n must be at most 1000 (got 1001)', 'search_hyde refuses n over 1,000');

SELECT throws_ok(format($$SELECT * FROM scirag.search_community(%L::public.vector, 1001)$$, :'q'), '22023',
  'scirag.search_community: n must be at most 1000 (got 1001)', 'search_community refuses n over 1,000');
SELECT lives_ok(format($$SELECT * FROM scirag.search_community(%L::public.vector, 1000)$$, :'q'),
  'search_community takes n = 1000');
SELECT throws_ok(format($$SELECT * FROM scirag.search_community_chunks(%L::public.vector, 1001)$$, :'q'), '22023',
  'scirag.search_community_chunks: n must be at most 1000 (got 1001)', 'search_community_chunks refuses n over 1,000');

SELECT throws_ok($$SELECT scirag.answer(repeat('a', 4001))$$, '22023',
  'scirag.answer: the question is 4001 characters long, at most 4000 allowed',
  'answer refuses a question over 4,000 characters');
SELECT throws_ok($$SELECT scirag.answer_text(repeat('a', 4001))$$, '22023',
  'scirag.answer: the question is 4001 characters long, at most 4000 allowed',
  'answer_text too (it calls answer)');
SELECT throws_ok($$SELECT scirag.answer('straw', '{"k": 1001}')$$, '22023', NULL,
  'answer refuses k over 1,000 (retrieve_config bounds it)');

-- NULL, 0 and negative sizes keep meaning "nothing"
SELECT is((SELECT count(*)::int FROM scirag.search_graph('straw', 0)), 0, 'n = 0 still returns nothing');
SELECT is((SELECT count(*)::int FROM scirag.search_community(:'q'::public.vector, -1)), 0, 'negative n still returns nothing');
SELECT tests.as_role(NULL);

SELECT * FROM finish();
ROLLBACK;
