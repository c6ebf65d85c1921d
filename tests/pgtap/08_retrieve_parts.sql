-- scirag.retrieve in parts (issue 16): the configuration resolver, the layer runner,
-- fusion and the post-fusion stages each work alone and compose into retrieve; the
-- fusion weights live only in the profile rows; a total deadline skips the optional
-- layers not yet started; a failing stage leaves its SQLSTATE and message in the
-- trace, while a cancel or statement timeout (57014) ends the call.
BEGIN;
SELECT plan(34);
\ir helpers/fixtures.psql

-- ---------------------------------------------------------------- fixtures
-- The 04 fixture (retrieve_fixtures.psql): query "ptarmigan plumage" with embedding
-- tests.frame_vec(0); vector (angle): c4, c1, c2, c3, c5; keyword (BM25): c1, then c2 and c3.
\ir retrieve_fixtures.psql

-- Replace a deployed function, whatever its signature, by one with the given PL/pgSQL
-- body (inside this transaction only: rolled back with it). Plants a failing layer.
CREATE FUNCTION tests.plant(fn regprocedure, body text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE OR REPLACE FUNCTION %s(%s) RETURNS %s LANGUAGE plpgsql AS %L',
                 (SELECT format('%I.%I', n.nspname, p.proname) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                  WHERE p.oid = fn),
                 pg_get_function_arguments(fn), pg_get_function_result(fn), body);
END $$;
-- A stage of the last trace, whole.
CREATE FUNCTION tests.stage(name text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT s FROM jsonb_array_elements(scirag.last_trace()->'stages') AS s WHERE s->>'stage' = name LIMIT 1
$$;
-- A scirag function by name (whatever its current signature).
CREATE FUNCTION tests.fn(name text) RETURNS regprocedure
LANGUAGE sql STABLE AS $$
  SELECT p.oid::regprocedure FROM pg_proc p WHERE p.proname = fn.name AND p.pronamespace = 'scirag'::regnamespace
$$;
CREATE FUNCTION tests.keyword_fn() RETURNS regprocedure
LANGUAGE sql STABLE AS $$ SELECT tests.fn('search_keyword') $$;
-- The SQLSTATE a statement raises (NULL when it does not). pgTAP's throws_ok cannot
-- test 57014: its WHEN OTHERS handler never catches query_canceled.
CREATE FUNCTION tests.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE query;
  RETURN NULL;
EXCEPTION
  WHEN query_canceled THEN RETURN SQLSTATE;
  WHEN OTHERS THEN RETURN SQLSTATE;
END $$;
GRANT EXECUTE ON FUNCTION tests.stage(text), tests.fn(text), tests.keyword_fn(), tests.sqlstate_of(text) TO PUBLIC;

-- ---------------------------------------------------------------- retrieve_config: the one resolver
SELECT is((SELECT scirag.retrieve_config('interactive', 5)->'weights'),
          (SELECT config->'weights' FROM scirag.retrieval_profiles WHERE name = 'interactive'),
  'retrieve_config takes the fusion weights from the profile row');
SELECT is(scirag.retrieve_config('interactive', 5, '{"weights": {"vector": 2}}')->'weights',
          (SELECT config->'weights' || '{"vector": 2}' FROM scirag.retrieval_profiles WHERE name = 'interactive'),
  '... and a per-call weight overrides that one key only');
SELECT is((SELECT count(*)::int FROM scirag.retrieval_profiles
           WHERE NOT config->'weights' ?& ARRAY['vector', 'keyword', 'graph', 'community', 'hyde']),
  0, 'every shipped profile row holds a weight for every layer');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'scirag'::regnamespace
           AND (proname IN ('default_rrf_weights', 'default_score_weights')
                OR (proname IN ('fuse_rrf', 'fuse_scores') AND pronargdefaults > 0))),
  0, 'no second copy of the weights: no default-weight functions, no parameter defaults on the fusions');
SELECT throws_like($$SELECT * FROM scirag.fuse_rrf(ARRAY[ROW('hyde', 1, 1, NULL)]::scirag.layer_hit[], '{"vector": 1.5}', 60)$$,
  '%no numeric weight for layer "hyde"%', 'fuse_rrf refuses a layer without a weight, naming it');

INSERT INTO scirag.retrieval_profiles (name, config, description)
SELECT 'rp-nodepth', config - 'depth', 'test' FROM scirag.retrieval_profiles WHERE name = 'interactive'
UNION ALL
SELECT 'rp-noweight', jsonb_set(config, '{weights}', (config->'weights') - 'keyword'), 'test'
FROM scirag.retrieval_profiles WHERE name = 'interactive';
SELECT throws_like($$SELECT scirag.retrieve_config('rp-nodepth', 5)$$,
  '%configuration of profile "rp-nodepth" lacks "depth"%', 'a profile row without a required key is refused, naming it');
SELECT throws_like($$SELECT scirag.retrieve_config('rp-noweight', 5)$$,
  '%no weight for layer "keyword"%', 'a profile row without a weight for one of its layers is refused, naming the layer');
SELECT throws_like($$SELECT scirag.retrieve_config('interactive', 5, '{"deadline_ms": -1}')$$,
  '%option "deadline_ms" must be a number between 0 and 600000%', 'deadline_ms is bounded');
SELECT throws_like($$SELECT scirag.retrieve_config('interactive', 5, '{"optional_layers": ["telepathy"]}')$$,
  '%unknown layer "telepathy" in options.optional_layers%', 'optional_layers names layers');
SELECT throws_like($$SELECT * FROM scirag.retrieve_layers('ptarmigan', '{"layers": ["keyword"]}')$$,
  '%lacks "depth"%', 'the layer runner checks a configuration it is handed');

-- The rows are the source: change a row, and retrieve ranks differently.
SELECT tests.as_role('scirag_reader');
SELECT isnt((SELECT chunk_id FROM scirag.retrieve('ptarmigan plumage', 1, query_embedding => tests.frame_vec(0))),
  :c4::bigint, 'setup: with the shipped interactive weights the nearest chunk is not first');
SELECT tests.as_role(NULL);
UPDATE scirag.retrieval_profiles SET config = config || jsonb_build_object('weights', config->'weights' || '{"vector": 10, "keyword": 0.1}')
WHERE name = 'interactive';
SELECT tests.as_role('scirag_reader');
SELECT is((SELECT chunk_id FROM scirag.retrieve('ptarmigan plumage', 1, query_embedding => tests.frame_vec(0))),
  :c4::bigint, 'a heavier vector weight in the interactive row puts the nearest chunk first: retrieve reads the row');
SELECT tests.as_role(NULL);
UPDATE scirag.retrieval_profiles SET config = config || jsonb_build_object('weights', config->'weights' || '{"vector": 0.35, "keyword": 0.65}')
WHERE name = 'interactive';

-- ---------------------------------------------------------------- the parts compose into retrieve
SELECT tests.as_role('scirag_loader');
CREATE TEMP TABLE parts AS
SELECT l.hits, l.stages, f.ranked
FROM scirag.retrieve_layers('ptarmigan plumage', scirag.retrieve_config('interactive', 5), tests.frame_vec(0)) l,
     scirag.retrieve_fuse(l.hits, scirag.retrieve_config('interactive', 5)) f;
SELECT is((SELECT array_agg(h.chunk_id ORDER BY h.rank) FROM parts, unnest(parts.hits) h WHERE h.layer = 'keyword'),
          ARRAY(SELECT chunk_id FROM scirag.search_keyword('ptarmigan plumage', 100) ORDER BY rank),
  'retrieve_layers alone: the keyword list is search_keyword''s ranking');
SELECT is((SELECT array_agg(h.chunk_id ORDER BY h.rank) FROM parts, unnest(parts.hits) h WHERE h.layer = 'vector'),
          ARRAY(SELECT chunk_id FROM scirag.search_vector(tests.frame_vec(0), 100) ORDER BY rank),
  '... and the vector list is search_vector''s');
SELECT results_eq(
  $$SELECT r.rank, r.chunk_id, r.score, r.layers, r.citation FROM parts, scirag.retrieve_rows(parts.ranked, 5) r$$,
  $$SELECT rank, chunk_id, score, layers, citation
    FROM scirag.retrieve('ptarmigan plumage', 5, query_embedding => tests.frame_vec(0))$$,
  'retrieve_layers -> retrieve_fuse -> retrieve_rows gives exactly retrieve''s rows');
SELECT is((SELECT array_agg(x.chunk_id ORDER BY x.o) FROM parts, scirag.retrieve_mmr(parts.ranked, 2, 0.7) m,
                  unnest(m.ranked) WITH ORDINALITY AS x(chunk_id, score, layers, o)),
          ARRAY(SELECT chunk_id FROM parts, scirag.mmr_select(ARRAY(SELECT x.chunk_id FROM unnest(parts.ranked) WITH ORDINALITY x(chunk_id, score, layers, o) ORDER BY o),
                                                             ARRAY(SELECT 6.0 - o FROM generate_series(1, 5) o), 2, 0.7) ORDER BY rank),
  'retrieve_mmr alone: mmr_select over the list order');
SELECT is((SELECT m.stage FROM parts, scirag.retrieve_mmr(parts.ranked, 5, 0.7) m), NULL,
  '... with no more candidates than k it does nothing and adds no stage');

-- ---------------------------------------------------------------- the deadline
SELECT tests.as_role('scirag_reader');
SELECT ok(count(*) > 0, 'deadline_ms 0 (profile deep): the call still answers')
FROM scirag.retrieve('ptarmigan plumage', 5, 'deep', '{"deadline_ms": 0}', tests.frame_vec(0));
SELECT is(ARRAY(SELECT s->>'stage' FROM jsonb_array_elements(scirag.last_trace()->'stages') s
                WHERE s->>'status' = 'skipped' AND s->>'reason' = 'deadline' ORDER BY 1),
          ARRAY['community', 'graph'],
  '... the optional layers not started before it (graph, community) are skipped, reason deadline');
SELECT ok(tests.trace_stage('vector') = 'ok' AND tests.trace_stage('keyword') = 'ok',
  '... while the required layers (vector, keyword) ran');
SELECT ok(count(*) > 0 AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(scirag.last_trace()->'stages') s
                                       WHERE s->>'reason' = 'deadline')
          AND tests.trace_stage('graph') <> 'skipped' AND tests.trace_stage('community') <> 'skipped',
  'a generous deadline (600000 ms) skips nothing: graph and community run')
FROM scirag.retrieve('ptarmigan plumage', 5, 'deep', '{"deadline_ms": 600000}', tests.frame_vec(0));
-- The deadline counts from the call's start: a slow required layer uses it up.
SELECT tests.as_role(NULL);
SELECT tests.plant(tests.keyword_fn(), 'BEGIN PERFORM pg_sleep(0.3); RETURN; END');
SELECT tests.as_role('scirag_reader');
SELECT ok(count(*) > 0 AND tests.trace_stage('keyword') = 'empty'
          AND tests.stage('graph')->>'reason' = 'deadline' AND tests.stage('community')->>'reason' = 'deadline',
  'deadline_ms 100 with a 300 ms keyword layer: the layer finishes, the optional layers after it are skipped')
FROM scirag.retrieve('ptarmigan plumage', 5, 'deep', '{"deadline_ms": 100}', tests.frame_vec(0));

-- ---------------------------------------------------------------- errors: SQLSTATE and message in the trace
SELECT tests.as_role(NULL);
SELECT tests.plant(tests.keyword_fn(),
  $b$BEGIN RAISE EXCEPTION 'cannot read lexeme "%" of %', $1, $1 USING ERRCODE = '22P02'; END$b$);
SELECT tests.as_role('scirag_reader');
SELECT ok(count(*) = 5 AND bool_and(NOT layers ? 'keyword'),
  'a planted failing keyword layer: retrieve still answers from the vector layer')
FROM scirag.retrieve('ptarmigan plumage', 5, query_embedding => tests.frame_vec(0));
SELECT is(tests.stage('keyword') - 'ms',
          '{"stage": "keyword", "status": "error", "sqlstate": "22P02", "error": "cannot read lexeme \"…\" of … …", "candidates": 0}'::jsonb,
  '... its trace names the layer, the SQLSTATE and the message, without the question''s words');
SELECT is(strpos(scirag.last_trace()::text, 'ptarmigan') + strpos(scirag.last_trace()::text, 'plumage'), 0,
  '... and the trace holds no question text');
SELECT tests.as_role(NULL);
SELECT tests.plant(tests.keyword_fn(), $b$BEGIN RAISE EXCEPTION 'canceling statement' USING ERRCODE = '57014'; END$b$);
SELECT tests.as_role('scirag_reader');
SELECT is(tests.sqlstate_of($$SELECT * FROM scirag.retrieve('ptarmigan plumage', 5, query_embedding => tests.frame_vec(0))$$),
  '57014', 'a layer that is cancelled (57014) is not swallowed: retrieve raises it');
SELECT tests.as_role(NULL);
SELECT tests.plant(tests.keyword_fn(), 'BEGIN PERFORM pg_sleep(5); RETURN; END');
SELECT tests.as_role('scirag_reader');
SET LOCAL statement_timeout = '300ms';
SELECT is(tests.sqlstate_of($$SELECT * FROM scirag.retrieve('ptarmigan plumage', 5, query_embedding => tests.frame_vec(0))$$),
  '57014', 'a statement timeout inside a layer ends the call (57014), it does not degrade into an empty layer');
SET LOCAL statement_timeout = 0;
SELECT tests.as_role(NULL);
SELECT tests.plant(tests.fn('rerank'),
  $b$BEGIN RAISE EXCEPTION 'model exploded' USING ERRCODE = '58000'; END$b$);
SELECT tests.as_role('scirag_loader');
SELECT is((SELECT array_agg(x.chunk_id ORDER BY x.o) FROM parts, scirag.retrieve_rerank('q', parts.ranked, '{}') r,
                  unnest(r.ranked) WITH ORDINALITY AS x(chunk_id, score, layers, o)),
          (SELECT array_agg(x.chunk_id ORDER BY x.o) FROM parts, unnest(parts.ranked) WITH ORDINALITY AS x(chunk_id, score, layers, o)),
  'retrieve_rerank alone, with a failing reranker: the order stays as it was');
SELECT is((SELECT r.stage->>'sqlstate' || ' ' || (r.stage->>'error') FROM parts, scirag.retrieve_rerank('q', parts.ranked, '{}') r),
  '58000 model exploded', '... and its stage says error, with SQLSTATE and message');

-- without PL/Python the embed stage says why
SELECT tests.as_role(NULL);
REVOKE EXECUTE ON FUNCTION scirag.embed_query(text) FROM PUBLIC, scirag_reader, scirag_loader, scirag_api;  -- scirag_api: retrieve runs as it (policies/reader_wall)
SELECT tests.as_role('scirag_reader');
SELECT count(*) AS _ FROM scirag.retrieve('ptarmigan plumage', 5, options => '{"layers": ["vector"]}') \gset
SELECT is(tests.stage('embed')->>'sqlstate', '42501', 'an embedding that fails leaves its SQLSTATE in the trace (42501: no PL/Python)');
SELECT is(tests.stage('vector')->>'reason', 'no query embedding', '... and the vector layer says why it was skipped');

-- ---------------------------------------------------------------- the question-length bound
SELECT throws_ok($$SELECT * FROM scirag.retrieve(repeat('a', 4001))$$, '22023',
  'scirag.retrieve: the question is 4001 characters long, at most 4000 allowed', 'retrieve: a 4001-character question is refused');
SELECT throws_ok($$SELECT scirag.check_question(repeat('a', 4001), 'scirag.search_keyword')$$, '22023',
  'scirag.search_keyword: the question is 4001 characters long, at most 4000 allowed',
  'check_question names its caller');
SELECT lives_ok($$SELECT scirag.check_question(repeat('a', 4000), 'x')$$, 'check_question: 4000 characters pass');

SELECT * FROM finish();
ROLLBACK;
