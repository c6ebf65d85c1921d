-- Presets (scirag.presets and preset_get / preset_set / preset_delete / preset_list):
-- shipped presets, round trips, validation naming the key, and who may write.
BEGIN;
SELECT plan(30);
\ir helpers/fixtures.psql
\ir deep_fixtures.psql

-- ---------------------------------------------------------------- table
SELECT ok((SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'scirag.presets'::regclass),
          'presets: row-level security enabled and forced');
SELECT is((SELECT pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = 'scirag.presets'::regclass), 'scirag_owner',
          'presets is owned by scirag_owner');
SELECT set_eq($$SELECT polname::text FROM pg_policy WHERE polrelid = 'scirag.presets'::regclass$$,
              ARRAY['read_all', 'loader_all'], 'presets has the read_all and loader_all policies');

-- ---------------------------------------------------------------- shipped presets, as a reader
SELECT tests.as_role('scirag_reader');
SELECT set_has($$SELECT name FROM scirag.preset_list()$$,
               $$VALUES ('default'), ('high-precision'), ('high-recall'), ('detailed-context')$$,
               'default, high-precision, high-recall and detailed-context ship');
SELECT is(scirag.preset_get('default'), scirag.preset_defaults(), 'default = the built-in defaults');
SELECT is(scirag.preset_get('default'),
  '{"retrieval": {"dense_limit": 19, "lexical_limit": 5, "rrf_k": 50, "top_k_rrf": 75, "top_n_final": 17,
                  "entity_boost": 0.05, "min_word_count": 150, "max_word_count": 1000, "mmr_lambda": 0.7,
                  "min_sentence_filter_enabled": false, "min_sentence_count": 5, "reranker_batch_size": 8,
                  "reranker_max_length": 512, "profile": null, "enrichment_enabled": false, "reranker": "none",
                  "reranker_model_path": null, "intent_bias_enabled": false, "intent_weight": 0.05, "mmr_enabled": false},
    "consolidation": {"enabled": false, "coverage_threshold": 0.5, "line_gap": 7, "min_content_length": 350,
                      "enrich_from_parent": true},
    "augmentation": {"top_n_contexts": 5}}'::jsonb,
  'the defaults are VulcanLab''s parameters, with every optional stage off');
SELECT is((SELECT count(*)::int FROM scirag.preset_list() p
           WHERE p.name IN ('default', 'high-precision', 'high-recall', 'detailed-context')
             AND scirag.preset_get(p.name) IS NOT NULL AND coalesce(p.description, '') <> ''), 4,
          'every shipped preset validates and says what it is for');
SELECT is(ARRAY[scirag.preset_get('high-recall') #>> '{retrieval,top_k_rrf}', scirag.preset_get('high-recall') #>> '{consolidation,line_gap}'],
          ARRAY['150', '7'], 'a preset''s overrides apply and the keys it leaves out come from the defaults');
SELECT throws_ok($$SELECT scirag.preset_get('no-such-preset')$$, '22023', 'scirag preset: unknown preset "no-such-preset"',
                 'an unknown preset raises, naming it');
SELECT throws_ok($$SELECT scirag.preset_set('mine', '{}')$$, '42501', NULL, 'a reader cannot call preset_set');
SELECT throws_ok($$SELECT scirag.preset_delete('default')$$, '42501', NULL, 'a reader cannot call preset_delete');
SELECT throws_ok($$INSERT INTO scirag.presets (name, config) VALUES ('mine', '{}')$$, '42501', NULL,
                 'a reader cannot insert a preset');
SELECT throws_ok($$UPDATE scirag.presets SET config = '{"augmentation": {"top_n_contexts": 99}}' WHERE name = 'default'$$,
                 '42501', NULL, 'a reader cannot change a preset');

-- ---------------------------------------------------------------- round trip, as the loader
SELECT tests.as_role('scirag_loader');
SELECT is(scirag.preset_set('round-trip', '{"retrieval": {"mmr_lambda": 0.5, "reranker": "cross_encoder",
                                              "reranker_model_path": "/models/bge"},
                                            "consolidation": {"line_gap": 3, "enrich_from_parent": false}}',
                            'a test preset'),
          jsonb_set(jsonb_set(jsonb_set(jsonb_set(jsonb_set(scirag.preset_defaults(),
            '{retrieval,mmr_lambda}', '0.5'), '{retrieval,reranker}', '"cross_encoder"'),
            '{retrieval,reranker_model_path}', '"/models/bge"'), '{consolidation,line_gap}', '3'),
            '{consolidation,enrich_from_parent}', 'false'),
          'preset_set returns the complete configuration');
SELECT is(scirag.preset_get('round-trip') #> '{retrieval,mmr_lambda}', '0.5'::jsonb, 'preset_get reads back what was set');
SELECT is((SELECT ROW(overrides, description)::text FROM scirag.preset_list() WHERE name = 'round-trip'),
          ROW('{"retrieval": {"mmr_lambda": 0.5, "reranker": "cross_encoder", "reranker_model_path": "/models/bge"},
                "consolidation": {"line_gap": 3, "enrich_from_parent": false}}'::jsonb, 'a test preset')::text,
          'preset_list shows the stored overrides and the description');
SELECT is((SELECT ROW(scirag.preset_set('round-trip', '{"augmentation": {"top_n_contexts": 9}}') #>> '{consolidation,line_gap}',
                      (SELECT description FROM scirag.presets WHERE name = 'round-trip'))::text),
          ROW('7', 'a test preset')::text,
          'setting again replaces the overrides and keeps the description when none is given');
SELECT is(scirag.preset_delete('round-trip'), true, 'preset_delete deletes');
SELECT is(scirag.preset_delete('round-trip'), false, 'deleting a missing preset says so');
SELECT throws_ok($$SELECT scirag.preset_get('round-trip')$$, '22023', NULL, 'a deleted preset is gone');
SELECT is((SELECT ROW(scirag.preset_delete('default'), scirag.preset_get('default') = scirag.preset_defaults())::text),
          '(t,t)', 'without its row, "default" falls back to the built-in defaults');

-- ---------------------------------------------------------------- validation names the key
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieval": {"mmr_lamda": 0.5}}')$$, '22023',
                 'scirag preset: unknown key "retrieval.mmr_lamda"', 'an unknown key raises, naming it');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieval": {"mmr_lambda": "high"}}')$$, '22023',
                 'scirag preset: key "retrieval.mmr_lambda" must be a number (got string)', 'a wrong type raises, naming the key');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieval": {"top_n_final": 2.5}}')$$, '22023',
                 'scirag preset: key "retrieval.top_n_final" must be an integer (got 2.5)', 'a fraction where an integer belongs raises');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"consolidation": {"coverage_threshold": 1.5}}')$$, '22023',
                 'scirag preset: key "consolidation.coverage_threshold" must be between 0 and 1 (got 1.5)', 'an out-of-range value raises');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieval": {"reranker": "bge"}}')$$, '22023',
                 'scirag preset: key "retrieval.reranker" must be one of ["none", "llm", "cross_encoder"] (got "bge")',
                 'a value outside an enumeration raises');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"consolidation": {"enrich_from_parent": "yes"}}')$$, '22023',
                 'scirag preset: key "consolidation.enrich_from_parent" must be a boolean (got string)', 'a non-boolean flag raises');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieveal": {}}')$$, '22023',
                 'scirag preset: unknown section "retrieveal"', 'an unknown section raises, naming it');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieval": {"min_word_count": 2000}}')$$, '22023',
                 'scirag preset: key "retrieval.min_word_count" (2000) must not exceed retrieval.max_word_count (1000)',
                 'min_word_count above max_word_count raises');
SELECT throws_ok($$INSERT INTO scirag.presets (name, config) VALUES ('bad', '{"augmentation": {"top_n_context": 3}}')$$, '22023',
                 'scirag preset: unknown key "augmentation.top_n_context"', 'the table''s CHECK validates direct writes too');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
