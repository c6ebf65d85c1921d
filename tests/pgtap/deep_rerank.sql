-- Reranking (scirag.rerank, PL/Python) and question intent (scirag.classify_intent).
-- No model is reachable here: the model paths are exercised for their fallbacks, the
-- adapters themselves with recorded outputs in tests/py/test_deep_rerank.py.
BEGIN;
SELECT plan(16);
\ir helpers/fixtures.psql
\ir deep_fixtures.psql

-- ---------------------------------------------------------------- intent (one classifier, issue 16)
SELECT is(ARRAY[scirag.classify_intent('What is CBT?'),
                scirag.classify_intent('How does SSRIs affect serotonin levels?'),
                scirag.classify_intent('Compare CBT and DBT approaches'),
                scirag.classify_intent('When should you use exposure therapy?'),
                scirag.classify_intent('What were the findings of the 2018 Smith study?'),
                scirag.classify_intent('What are criticisms of the DSM-5?')],
          ARRAY['DEFINITION', 'MECHANISM', 'COMPARISON', 'APPLICATION', 'STUDY_DETAIL', 'CRITIQUE'],
          'classify_intent labels VulcanLab''s example questions');
SELECT is(ARRAY[scirag.classify_intent('How much straw could Harlan County supply each year?'),
                scirag.classify_intent('What is the difference between wheat and barley straw?'),
                scirag.classify_intent('What are the limitations of the removal experiment?'),
                scirag.classify_intent('straw'), scirag.classify_intent(NULL)],
          ARRAY['QUANTITY', 'COMPARISON', 'CRITIQUE', 'GENERAL', 'GENERAL'],
          'quantities are QUANTITY, specific cues win over "what is", no cue is GENERAL');
SELECT is((SELECT ROW(l.lanname, p.provolatile)::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
           WHERE p.oid = 'scirag.classify_intent(text)'::regprocedure), '(plpython3u,s)',
          'classify_intent is the answerer''s classifier (PL/Python over scirag.answer_intents, stable)');

-- ---------------------------------------------------------------- fixture
SELECT tests.as_role('scirag_loader');
SELECT tests.deep_doc('rr', title => 'Rerank fixture') AS dr \gset
SELECT tests.deep_chunk(:dr, 0, NULL, 'section', 'Rerank', 'Rerank' || E'\n\n' || 'text', 1, 20) AS rroot \gset
SELECT tests.deep_chunk(:dr, 1, 0, 'prose', NULL, 'Barley is grown in the north.', 2, 2) AS c1 \gset
SELECT tests.deep_chunk(:dr, 2, 0, 'section', 'Results', 'Results' || E'\n\n' || 'text', 3, 20) AS rsec \gset
SELECT tests.deep_chunk(:dr, 3, 2, 'prose', NULL, 'Osgood County grows corn for stover.', 4, 4) AS c2 \gset
SELECT tests.deep_chunk(:dr, 4, 2, 'table', NULL, 'County | Crop | Area' || E'\n' || 'Osgood | Corn | 188,300', 5, 6) AS c3 \gset
SELECT tests.as_role('scirag_reader');

-- ---------------------------------------------------------------- no model
SELECT is(ARRAY(SELECT ROW(chunk_id, score, status)::text FROM scirag.rerank('why?', ARRAY[:c1, :c2]::bigint[],
                                                                  ARRAY['Barley is grown.', 'Corn is grown.'])),
          ARRAY[ROW(:c1::bigint, 1.0::float8, 'disabled')::text, ROW(:c2::bigint, 0.5::float8, 'disabled')::text],
          'reranker none and nothing to boost: the fused order, status disabled');
SELECT is(ARRAY(SELECT chunk_id FROM scirag.rerank('What does Osgood County grow?', ARRAY[:c1, :c2]::bigint[],
                                                   ARRAY['Barley is grown in the north.', 'Osgood County grows corn for stover.'],
                                                   '{"fused_scores": [0.03, 0.03]}')),
          ARRAY[:c2, :c1]::bigint[], 'entity boost: the chunk naming the query''s entity moves up');
SELECT is((SELECT round((max(score) - min(score))::numeric, 4) FROM scirag.rerank('q', ARRAY[:c1, :c2]::bigint[],
             ARRAY['Barley is grown in the north.', 'Osgood County grows corn for stover.'],
             '{"fused_scores": [0.03, 0.03], "entities": ["Osgood County", "corn", "maize"]}')),
          0.1000, 'entity boost: +0.05 per query entity found in the chunk (two of three here)');
SELECT is(ARRAY(SELECT chunk_id FROM scirag.rerank('Compare the crops by county', ARRAY[:c1, :c3]::bigint[],
                                                   ARRAY['Barley is grown in the north.', 'County | Crop | Area' || E'\n' || 'Osgood | Corn | 188,300'],
                                                   '{"intent_bias": true, "entity_boost": 0, "fused_scores": [1, 1]}')),
          ARRAY[:c3, :c1]::bigint[], 'intent bias: a comparison prefers a table in an H2 section');
SELECT is((SELECT round((max(score) - min(score))::numeric, 4) FROM scirag.rerank('x', ARRAY[:c1, :c3]::bigint[],
             ARRAY['Barley is grown in the north.', 'County | Crop | Area' || E'\n' || 'Osgood | Corn | 188,300'],
             '{"intent_bias": true, "intent": "COMPARISON", "entity_boost": 0, "fused_scores": [1, 1]}')),
          0.0500, 'intent bias: a full shape match is worth intent_weight (0.05), no match nothing');

-- ---------------------------------------------------------------- model failures fall back
-- the model folder is an admin setting (issue 13): a caller's model_path is refused
SELECT throws_like($$SELECT * FROM scirag.rerank('q', ARRAY[1]::bigint[], ARRAY['a'], '{"reranker": "cross_encoder", "model_path": "/etc"}')$$,
                   '%"model_path" is not accepted from callers%', 'a caller cannot choose the model file the server loads');
SELECT tests.as_role(NULL);
INSERT INTO scirag.settings (key, value, description) VALUES ('reranker_model_path', '/nonexistent/model', 'test')
ON CONFLICT (key) DO UPDATE SET value = excluded.value;   -- deployed as "builtin" (schema/deep_rerank)
SELECT tests.as_role('scirag_reader');
SELECT is(ARRAY(SELECT ROW(chunk_id, status)::text FROM scirag.rerank('q', ARRAY[:c1, :c2]::bigint[], ARRAY['a', 'b'],
                                                          '{"reranker": "cross_encoder"}')),
          ARRAY[ROW(:c1::bigint, 'fallback: model_unavailable')::text, ROW(:c2::bigint, 'fallback: model_unavailable')::text],
          'a cross-encoder folder that is not there: the input order, status fallback: model_unavailable');
SELECT tests.as_role(NULL);
DELETE FROM scirag.settings WHERE key = 'reranker_model_path';
SELECT tests.as_role('scirag_reader');
SELECT is(ARRAY(SELECT DISTINCT status FROM scirag.rerank('q', ARRAY[:c1, :c2]::bigint[], ARRAY['a', 'b'], '{"reranker": "cross_encoder"}')),
          ARRAY['fallback: no_model_path'], 'no reranker_model_path setting: fallback: no_model_path');
SELECT is(ARRAY(SELECT ROW(chunk_id, status)::text FROM scirag.rerank('q', ARRAY[:c2, :c1]::bigint[], ARRAY['a', 'b'],
                                                          '{"reranker": "llm", "entities": ["a"]}')),
          ARRAY[ROW(:c2::bigint, 'fallback: no_llm_configured')::text, ROW(:c1::bigint, 'fallback: no_llm_configured')::text],
          'an LLM reranker with no LLM configured: the input order, no boosts, fallback: no_llm_configured');
SELECT ok(NOT EXISTS (SELECT 1 FROM scirag.rerank('secret question text', ARRAY[:c1]::bigint[], ARRAY['secret chunk text'],
                                                  '{"reranker": "llm"}') r
                      WHERE r.status ~* 'secret'), 'the fallback status is content-free');
SELECT throws_like($$SELECT * FROM scirag.rerank('q', '{1}', '{a}', '{"bogus": 1}')$$,
                   '%unknown rerank option "bogus"%', 'an unknown option raises, naming it');
SELECT is((SELECT count(*)::int FROM scirag.rerank('q', '{}', '{}')), 0, 'nothing in, nothing out');
SELECT is(ARRAY(SELECT chunk_id FROM scirag.rerank('q', ARRAY[:c1, -7, :c2]::bigint[], ARRAY['a', 'ghost', 'b'])),
          ARRAY[:c1, :c2]::bigint[], 'ids that do not exist (or the caller cannot read) are dropped');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
