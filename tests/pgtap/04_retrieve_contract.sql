-- The scirag.retrieve() contract (docs/retrieval.md): works without PL/Python when
-- the caller passes the query embedding; layers can be chosen, fail and time out
-- without failing the call; traces are content-free; the result shape and citations;
-- weighted RRF with k = 60.
BEGIN;
SELECT plan(45);
\ir helpers/fixtures.psql

-- ---------------------------------------------------------------- fixtures
-- "Fixture rt-a": :doc and its chunks :c1 .. :c5, their layer ranks and fused order
-- (c1, c2, c3, c4, c5) are described in retrieve_fixtures.psql.
\ir retrieve_fixtures.psql

-- Words of the query or of any chunk that appear in the last trace.
CREATE FUNCTION tests.trace_mentions(words text[]) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(w ORDER BY w), '{}') FROM unnest(words) AS w
  WHERE strpos(lower(scirag.last_trace()::text), lower(w)) > 0
$$;
GRANT EXECUTE ON FUNCTION tests.trace_mentions(text[]) TO PUBLIC;

-- ---------------------------------------------------------------- no PL/Python at all
-- Take PL/Python away from every scirag role (inside this transaction only).
REVOKE EXECUTE ON FUNCTION scirag.embed_query(text), scirag.plpy_bootstrap()
  FROM PUBLIC, scirag_reader, scirag_loader, scirag_api;  -- scirag_api: retrieve runs as it (policies/reader_wall)
SELECT tests.as_role('scirag_reader');

SELECT throws_ok($$SELECT scirag.embed_query('ptarmigan')$$, '42501', NULL,
  'setup: the reader can no longer call scirag.embed_query (PL/Python is unreachable)');

SELECT results_eq(
  $$SELECT chunk_id FROM scirag.retrieve('ptarmigan plumage', k => 5, profile => 'interactive-rrf',
                                         query_embedding => tests.frame_vec(0)) ORDER BY rank$$,
  format('VALUES (%s::bigint), (%s), (%s), (%s), (%s)', :c1, :c2, :c3, :c4, :c5),
  'with query_embedding, retrieve answers without PL/Python, in the expected (RRF) fused order');
SELECT ok(scirag.last_trace() IS NOT NULL AND tests.trace_stage('embed') IS NULL,
  '... its trace has no embed stage');
SELECT ok(tests.trace_stage('vector') = 'ok' AND tests.trace_stage('keyword') = 'ok',
  '... and both the vector and the keyword stage are ok');

-- without a query embedding the vector layer degrades, the call still answers
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.retrieve('ptarmigan plumage', k => 5)$$,
  format('VALUES (%s::bigint), (%s), (%s)', :c1, :c2, :c3),
  'without query_embedding and without PL/Python, retrieve still answers from the keyword layer');
SELECT ok(tests.trace_stage('embed') = 'error' AND tests.trace_stage('vector') = 'skipped'
          AND tests.trace_stage('keyword') = 'ok',
  '... and its trace says embed error, vector skipped, keyword ok');

-- ---------------------------------------------------------------- the result shape
SELECT is(
  (SELECT pg_get_function_result('scirag.retrieve(text, int, text, jsonb, public.vector)'::regprocedure)),
  'TABLE(rank integer, chunk_id bigint, document_id bigint, external_id text, score double precision, '
  'layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb)',
  'retrieve returns rank, chunk_id, document_id, external_id, score, layers, title, section_path, content, is_table, citation');

CREATE TEMP TABLE r AS
  SELECT * FROM scirag.retrieve('ptarmigan plumage', k => 5, profile => 'interactive-rrf',
                                query_embedding => tests.frame_vec(0));

SELECT is(ARRAY(SELECT rank FROM r ORDER BY rank), ARRAY[1, 2, 3, 4, 5], 'rank is 1..n');
SELECT ok(bool_and(document_id = :doc AND external_id = 'rt-a' AND title = 'Fixture rt-a'
                   AND section_path = '1 Fixture' AND content IS NOT NULL), 'document columns are filled')
FROM r;
SELECT ok(count(*) = 5 AND bool_and(citation ?& ARRAY['external_id', 'title', 'cite']
                   AND citation->>'external_id' = external_id AND citation->>'title' = title
                   AND (citation->>'chunk_id')::bigint = chunk_id),
  'every citation has external_id, title and cite, matching the row')
FROM r;
SELECT is((SELECT citation->>'cite' FROM r WHERE chunk_id = :c1),
  'Ada Tester & Bo Fixture (2024), Fixture rt-a, 1 Fixture, doi:10.0000/rt-a',
  'the cite string: authors (year), title, section, doi');
SELECT is(ARRAY(SELECT chunk_id FROM r WHERE is_table), ARRAY[:c4]::bigint[], 'is_table marks the table chunk only');
SELECT is((SELECT layers FROM r WHERE chunk_id = :c1), '{"vector": 2, "keyword": 1}'::jsonb,
  'layers gives the rank each layer gave the chunk');
SELECT ok(bool_and(abs(score - (SELECT sum((p.config->'weights'->>l.key)::float8 / ((p.config->>'rrf_k')::int + l.value::int))
                                FROM jsonb_each_text(layers) AS l, scirag.retrieval_profiles p
                                WHERE p.name = 'interactive-rrf')) < 1e-12),
  'every score is sum(weight / (rrf_k + rank)) over the layers that found the chunk, weights and rrf_k from the profile row')
FROM r;

-- ---------------------------------------------------------------- layer selection, failure, budgets
SELECT set_eq(
  $$SELECT chunk_id FROM scirag.retrieve('ptarmigan plumage', k => 5, options => '{"layers": ["keyword"]}')
    WHERE layers = jsonb_build_object('keyword', layers->'keyword')$$,
  format('VALUES (%s::bigint), (%s), (%s)', :c1, :c2, :c3),
  'options layers = [keyword]: only keyword results');
SELECT ok(tests.trace_stage('vector') = 'disabled' AND tests.trace_stage('keyword') = 'ok'
          AND tests.trace_stage('embed') IS NULL,
  '... trace: vector disabled, keyword ok, no embed stage');

SELECT ok(count(*) = 5 AND bool_and(layers ? 'vector' AND NOT layers ? 'keyword'),
  'a forced keyword failure: the vector results still come back')
FROM scirag.retrieve('ptarmigan plumage', k => 5, query_embedding => tests.frame_vec(0),
                     options => '{"_fail_layers": ["keyword"]}');
SELECT ok(tests.trace_stage('keyword') = 'error' AND tests.trace_stage('vector') = 'ok',
  '... trace: keyword error, vector ok');

-- budgets_ms are judged after a layer finished: the layer runs, its late result is
-- dropped. What skips a layer before it starts is the total deadline (deadline_ms:
-- 08_retrieve_parts.sql).
SELECT ok(count(*) = 3 AND bool_and(layers ? 'keyword' AND NOT layers ? 'vector'),
  'a zero vector budget: the vector layer''s late result is dropped, keyword still answers')
FROM scirag.retrieve('ptarmigan plumage', k => 5, query_embedding => tests.frame_vec(0),
                     options => '{"budgets_ms": {"vector": 0}}');
SELECT is((SELECT s->>'status' || ' ' || (s->>'candidates') FROM jsonb_array_elements(scirag.last_trace()->'stages') s
           WHERE s->>'stage' = 'vector'),
  'timeout 0', '... trace: vector timeout, 0 candidates');

-- (graph, community and hyde may be missing, disabled by the profile, or fail here without PL/Python: whatever
-- their status, they degrade and the call answers)
SELECT ok(count(*) = 5 AND tests.trace_stage('vector') = 'ok' AND tests.trace_stage('keyword') = 'ok'
          AND (SELECT bool_and(tests.trace_stage(l) IN ('ok', 'empty', 'skipped', 'error', 'timeout', 'disabled'))
               FROM unnest(ARRAY['graph', 'community', 'hyde']) AS l),
  'profile deep: every layer is traced, the ones that cannot run here degrade, the call still answers')
FROM scirag.retrieve('ptarmigan plumage', k => 5, profile => 'deep', query_embedding => tests.frame_vec(0));

SELECT throws_like(
  $$SELECT * FROM scirag.retrieve('ptarmigan', options => '{"layers": ["vector", "telepathy"]}', query_embedding => tests.frame_vec(0))$$,
  '%unknown layer "telepathy"%', 'an unknown layer raises an error naming it');
SELECT throws_like(
  $$SELECT * FROM scirag.retrieve('ptarmigan', profile => 'nonesuch')$$,
  '%unknown profile "nonesuch"%', 'an unknown profile raises an error naming it');
SELECT throws_like(
  $$SELECT * FROM scirag.retrieve('ptarmigan', options => '["keyword"]')$$,
  '%options must be a JSON object%', 'options that are not a JSON object raise a clear error');

-- ---------------------------------------------------------------- traces are content-free
SELECT count(*) AS _ FROM scirag.retrieve('ptarmigan plumage marmalade', k => 5, query_embedding => tests.frame_vec(0)) \gset
SELECT is(tests.trace_mentions(ARRAY['ptarmigan', 'plumage', 'marmalade', 'tundra', 'granite', 'sediment', 'Fixture', 'rt-a']),
  '{}'::text[], 'the trace of a normal call contains no query, chunk or document text');
SELECT count(*) AS _ FROM scirag.retrieve('ptarmigan plumage marmalade', k => 5, query_embedding => tests.frame_vec(0),
                                          options => '{"_fail_layers": ["keyword", "vector"]}') \gset
SELECT is(tests.trace_mentions(ARRAY['ptarmigan', 'plumage', 'marmalade', 'tundra', 'granite', 'sediment', 'Fixture', 'rt-a']),
  '{}'::text[], 'the trace of a call with failing layers contains no query or chunk text');

-- ---------------------------------------------------------------- weighted RRF
-- Chunk 1: vector rank 1 only. Chunk 2: keyword rank 1 only. Chunk 3: vector 2, keyword 3.
-- The weights are the profile rows' (the one place they live, issue 16).
CREATE TEMP TABLE w AS
  SELECT (SELECT config->'weights' FROM scirag.retrieval_profiles WHERE name = 'interactive-rrf') AS rrf,
         (SELECT (config->>'rrf_k')::int FROM scirag.retrieval_profiles WHERE name = 'interactive-rrf') AS rrf_k,
         (SELECT config->'weights' FROM scirag.retrieval_profiles WHERE name = 'interactive') AS score;
CREATE TEMP TABLE h AS SELECT ARRAY[ROW('vector', 1, 1, NULL)::scirag.layer_hit, ROW('keyword', 2, 1, NULL)::scirag.layer_hit,
                                    ROW('vector', 3, 2, NULL)::scirag.layer_hit, ROW('keyword', 3, 3, NULL)::scirag.layer_hit] AS hits;
SELECT results_eq($$SELECT chunk_id FROM scirag.fuse_rrf((SELECT hits FROM h), (SELECT rrf FROM w), (SELECT rrf_k FROM w))$$,
  $$VALUES (3::bigint), (1), (2)$$,
  'profile weights: two layers beat one, and vector rank 1 (1.5) beats keyword rank 1 (1.0)');
SELECT results_eq($$SELECT chunk_id FROM scirag.fuse_rrf((SELECT hits FROM h), (SELECT rrf || '{"keyword": 2.0}' FROM w), 60)$$,
  $$VALUES (3::bigint), (2), (1)$$,
  'weights change the order: with keyword 2.0 the keyword rank 1 beats the vector rank 1');
SELECT is((SELECT score FROM scirag.fuse_rrf((SELECT hits FROM h), (SELECT rrf FROM w), (SELECT rrf_k FROM w)) WHERE chunk_id = 1),
  1.5::float8 / 61, 'the profile''s rrf_k is 60: vector rank 1 scores 1.5 / (60 + 1)');
SELECT ok((SELECT abs(score - (1.5 / 62 + 1.0 / 63)) < 1e-15 FROM scirag.fuse_rrf((SELECT hits FROM h), (SELECT rrf FROM w), 60)
           WHERE chunk_id = 3),
  'hand-computed: vector rank 2 + keyword rank 3 = 1.5/62 + 1.0/63');
SELECT is((SELECT score FROM scirag.fuse_rrf((SELECT hits FROM h), (SELECT rrf FROM w), rrf_k => 10) WHERE chunk_id = 1),
  1.5::float8 / 11, 'rrf_k is a parameter: 1.5 / (10 + 1)');
SELECT ok((SELECT abs(score - (1.5 + 1.0 + 0.8 + 0.6 + 1.2) / 61) < 1e-15
           FROM scirag.fuse_rrf(ARRAY[ROW('vector', 9, 1, NULL), ROW('keyword', 9, 1, NULL), ROW('graph', 9, 1, NULL),
                                      ROW('community', 9, 1, NULL), ROW('hyde', 9, 1, NULL)]::scirag.layer_hit[],
                                (SELECT rrf FROM w), 60)),
  'the RRF profiles'' weights: vector 1.5, keyword 1.0, graph 0.8, community 0.6, hyde 1.2');

SELECT is(
  (SELECT chunk_id FROM scirag.retrieve('ptarmigan plumage', k => 1, query_embedding => tests.frame_vec(0),
                                        options => '{"weights": {"vector": 10, "keyword": 0.1}}')),
  :c4::bigint,
  'retrieve passes per-call weights to the fusion: a heavy vector weight puts the nearest chunk first');

SELECT tests.as_role(NULL);
-- ---------------------------------------------------------------- score fusion
SELECT ok((SELECT abs(score - (0.55 * 1.0 + 0.45 * 0.5) / 1.0) < 1e-12
           FROM scirag.fuse_scores(ARRAY[ROW('keyword', 1, 1, 8.0), ROW('keyword', 2, 2, 2.0),
                                         ROW('vector', 2, 1, 0.9), ROW('vector', 1, 2, 0.7), ROW('vector', 3, 3, 0.5)
                                        ]::scirag.layer_hit[], '{"vector": 0.45, "keyword": 0.55}', 'max')
           WHERE chunk_id = 1),
  'fuse_scores hand-computed: keyword 8/8 x 0.55 + vector min-max (0.7-0.5)/(0.9-0.5) x 0.45');
SELECT is((SELECT chunk_id FROM scirag.fuse_scores(ARRAY[
             ROW('keyword', 1, 1, 20.0), ROW('keyword', 2, 2, 3.0), ROW('keyword', 3, 3, 2.9),
             ROW('vector', 2, 1, 0.61), ROW('vector', 3, 2, 0.60), ROW('vector', 1, 3, 0.59)]::scirag.layer_hit[],
           '{"vector": 0.45, "keyword": 0.55}', 'max') LIMIT 1),
  1::bigint, 'score fusion keeps a confident keyword hit on top of a flat dense list (RRF would not)');
SELECT is((SELECT round(score::numeric, 12) FROM scirag.fuse_scores(ARRAY[
             ROW('keyword', 1, 1, 5.0), ROW('keyword', 2, 2, 1.0), ROW('hyde', 2, 1, 0.8), ROW('hyde', 1, 2, 0.4)
           ]::scirag.layer_hit[], (SELECT score FROM w), 'max') WHERE chunk_id = 2),
  round((0.65 * (1.0 / 5.0) + 0.1 * 1.0) / (0.65 + 0.1), 12),
  'score fusion: keyword scaled by its max (1/5: BM25 has a true zero), HyDE min-max, interactive''s weights 0.65 / 0.1, not the RRF ones');
SELECT is((SELECT count(*)::int FROM scirag.fuse_scores(ARRAY[ROW('vector', 1, 1, 0.9), ROW('vector', 2, 2, 0.7)]::scirag.layer_hit[],
             '{"vector": 0, "keyword": 1}', 'max')),
  0, 'score fusion: a layer weighted 0 is left out, even when it alone has hits (it was 0/0: division by zero)');
SELECT is((SELECT string_agg(chunk_id::text || ':' || layers::text, ',' ORDER BY chunk_id) FROM scirag.fuse_scores(ARRAY[
             ROW('vector', 1, 1, 0.9), ROW('keyword', 2, 1, 3.0)]::scirag.layer_hit[], '{"vector": 0, "keyword": 1}', 'max')),
  '2:{"keyword": 1}', 'score fusion: the zero-weighted layer neither scores nor lists its candidates');
SELECT throws_like($$SELECT * FROM scirag.retrieve('ptarmigan', options => '{"keyword_scale": "log"}')$$,
  '%unknown keyword_scale "log"%', 'an unknown keyword_scale is refused, by name');
SELECT throws_like($$SELECT * FROM scirag.retrieve('ptarmigan', options => '{"proximity": -1}')$$,
  '%option "proximity" must be a number between 0 and 100 (got -1)%', 'a negative proximity is refused, naming the option and its bounds');
SELECT throws_like($$SELECT * FROM scirag.retrieve('ptarmigan', options => '{"proximity": "lots"}')$$,
  '%option "proximity" must be a number between 0 and 100 (got string)%', 'a proximity that is not a number is refused, naming the option and its bounds');
SELECT results_eq(
  $$SELECT tests.trace_stage('fuse') IS NOT NULL, scirag.last_trace()->'stages'->-1->>'method'
    FROM (SELECT count(*) FROM scirag.retrieve('ptarmigan plumage', k => 3, query_embedding => tests.frame_vec(0))) x$$,
  $$VALUES (true, 'score')$$,
  'the interactive profile fuses by score, and the trace says which fusion ran');

SELECT results_eq(
  $$SELECT chunk_id, round(score::numeric, 9) FROM scirag.retrieve('ptarmigan plumage', k => 5,
      query_embedding => tests.frame_vec(0), options => '{"keyword_scale": "auto"}')$$,
  $$SELECT chunk_id, round(score::numeric, 9) FROM scirag.retrieve('ptarmigan plumage', k => 5,
      query_embedding => tests.frame_vec(0), options => '{"keyword_scale": "max"}')$$,
  'keyword_scale auto without graph or community hits ranks and scores exactly as max');
SELECT ok((SELECT array_agg(round(score::numeric, 9) ORDER BY rank) FROM scirag.retrieve('ptarmigan plumage', k => 5,
             query_embedding => tests.frame_vec(0), options => '{"keyword_scale": "auto"}'))
          IS DISTINCT FROM
          (SELECT array_agg(round(score::numeric, 9) ORDER BY rank) FROM scirag.retrieve('ptarmigan plumage', k => 5,
             query_embedding => tests.frame_vec(0), options => '{"keyword_scale": "minmax"}')),
  '... and differs from minmax here (so the comparison above can fail)');
SELECT is((SELECT s->>'keyword_scale'
           FROM (SELECT count(*) FROM scirag.retrieve('ptarmigan plumage', k => 5, query_embedding => tests.frame_vec(0),
                   options => '{"keyword_scale": "auto"}')) x,
                jsonb_array_elements(scirag.last_trace()->'stages') s WHERE s->>'stage' = 'fuse'),
  'max', 'auto resolves to max when neither graph nor community found anything');

SELECT * FROM finish();
ROLLBACK;
