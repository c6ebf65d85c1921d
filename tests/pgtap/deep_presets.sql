-- Presets (scirag.presets and preset_get / preset_set / preset_delete / preset_list):
-- shipped presets, round trips, validation naming the key, and who may write; a key
-- that becomes a retrieve option has that option's bounds and no others (issue 16).
BEGIN;
SELECT plan(33);
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

-- ---------------------------------------------------------------- one place of option bounds (issue 16)
SELECT tests.as_role(NULL);
-- The preset keys scirag.retrieve_config turns into retrieve options, and the option
-- each becomes (the specification this test holds against both functions).
CREATE TABLE tests.preset_option (key text PRIMARY KEY, option text NOT NULL);
INSERT INTO tests.preset_option VALUES
  ('dense_limit', 'depths.vector'), ('lexical_limit', 'depths.keyword'), ('rrf_k', 'rrf_k'), ('top_k_rrf', 'pool'),
  ('top_n_final', 'k'), ('entity_boost', 'rerank.entity_boost'), ('mmr_lambda', 'mmr_lambda'),
  ('reranker_batch_size', 'rerank.batch_size'), ('reranker_max_length', 'rerank.max_length'),
  ('reranker', 'rerank.reranker'), ('intent_bias_enabled', 'rerank.intent_bias'),
  ('intent_weight', 'rerank.intent_weight'), ('mmr_enabled', 'mmr');
-- An option's specification, read straight from retrieve_option_schema() (not through
-- the function under test): a map's keys share its "of", a record has "fields".
CREATE FUNCTION tests.option_spec(option text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN split_part(option, '.', 2) = '' THEN s->option
              WHEN s->split_part(option, '.', 1)->>'type' = 'map' THEN s->split_part(option, '.', 1)->'of'
              ELSE s->split_part(option, '.', 1)->'fields'->split_part(option, '.', 2) END
  FROM scirag.retrieve_option_schema() AS s
$$;
-- For every numeric key and both ends of its option's range: the bound itself is a
-- valid preset that scirag.retrieve_config accepts and carries into that option; one
-- step past it is refused by preset_set with 22023, naming the key, the bounds and
-- (hint) the option. Returns what went wrong, one line each.
CREATE FUNCTION tests.preset_bound_failures() RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  edge numeric;
  step numeric;
  got jsonb;
  msg text;
  hint text;
  bad text[] := '{}';
BEGIN
  FOR r IN SELECT po.key, po.option, tests.option_spec(po.option) AS spec FROM tests.preset_option po
           WHERE tests.option_spec(po.option)->>'type' IN ('integer', 'number') ORDER BY po.key LOOP
    step := CASE r.spec->>'type' WHEN 'integer' THEN 1 ELSE 0.5 END;
    FOREACH edge IN ARRAY ARRAY[(r.spec->>'min')::numeric, (r.spec->>'max')::numeric] LOOP
      BEGIN
        -- the rerank option exists only when a rerank stage is on (intent bias here)
        PERFORM scirag.preset_set('bound-test', jsonb_build_object('retrieval', jsonb_build_object(r.key, edge)
          || CASE WHEN starts_with(r.option, 'rerank.') THEN '{"intent_bias_enabled": true}' ELSE '{}' END::jsonb));
        got := scirag.retrieve_config('interactive', 10, '{"preset": "bound-test"}') #> string_to_array(r.option, '.');
        IF got IS DISTINCT FROM to_jsonb(edge) THEN
          bad := bad || format('%s = %s arrives in retrieve as %s = %s', r.key, edge, r.option, got);
        END IF;
      EXCEPTION WHEN invalid_parameter_value THEN
        bad := bad || format('%s = %s (a bound of %s) is refused: %s', r.key, edge, r.option, SQLERRM);
      END;
      msg := NULL;
      BEGIN
        PERFORM scirag.preset_set('bound-test', jsonb_build_object('retrieval', jsonb_build_object(r.key,
          edge + CASE WHEN edge = (r.spec->>'min')::numeric THEN -step ELSE step END)));
      EXCEPTION WHEN invalid_parameter_value THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
      END;
      IF msg IS NULL THEN
        bad := bad || format('%s one step past %s is accepted', r.key, edge);
      ELSIF NOT starts_with(msg, format('scirag preset: key "retrieval.%s" must be between %s and %s (got ',
                                        r.key, r.spec->>'min', r.spec->>'max'))
            OR strpos(coalesce(hint, ''), format('"%s"', r.option)) = 0 THEN
        bad := bad || format('%s past %s: %s (hint: %s)', r.key, edge, msg, hint);
      END IF;
    END LOOP;
  END LOOP;
  RETURN bad;
END $$;
GRANT SELECT ON tests.preset_option TO PUBLIC;
GRANT EXECUTE ON FUNCTION tests.option_spec(text), tests.preset_bound_failures() TO PUBLIC;

SELECT is(ARRAY(SELECT po.key FROM tests.preset_option po
                WHERE (scirag.preset_schema()->'retrieval'->po.key) - 'default' - 'option' IS DISTINCT FROM tests.option_spec(po.option) - 'required'
                ORDER BY po.key), '{}'::text[],
          'every preset key that becomes a retrieve option has exactly that option''s type, bounds and values');
SELECT tests.as_role('scirag_loader');
SELECT is(tests.preset_bound_failures(), '{}'::text[],
          'at each bound a preset key passes preset_set and retrieve_config and arrives as its option; one step past, 22023 names the key, the bounds and the option');
SELECT throws_ok($$SELECT scirag.preset_set('bad', '{"retrieval": {"dense_limit": 1001}}')$$, '22023',
                 'scirag preset: key "retrieval.dense_limit" must be between 0 and 1000 (got 1001)',
                 'a candidate depth past retrieve''s bound is refused when the preset is written, not when it is used');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
