-- Deploy scirag:functions/preset_config
-- What a preset may say: VulcanLab's retrieval / consolidation / augmentation
-- parameters with their defaults, plus scirag's stage switches. One schema, used
-- by the presets table's CHECK, by preset_get and by scirag.consolidate's options.
-- Reworked (issue 16): a retrieval key that scirag.retrieve turns into one of its
-- options names that option ("option") instead of carrying bounds of its own; its
-- type, bounds and values are read from scirag.retrieve_option_schema(), the one
-- place of every retrieve option's bounds, so a preset that validates here also
-- passes retrieve's check. The other keys (read by enrichment, consolidation and the
-- answerer, not options of retrieve) keep their bounds here, their only place.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.preset_option_spec(option text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  sch jsonb := scirag.retrieve_option_schema();
  top text := split_part(option, '.', 1);
  sub text := nullif(split_part(option, '.', 2), '');
  spec jsonb := sch->top;
BEGIN
  -- "rerank.entity_boost": a field of a record option; "depths.vector": a key of a map
  -- option (every key has the map's value spec); "rrf_k": a plain option.
  IF sub IS NOT NULL AND spec->>'type' = 'record' THEN
    spec := spec->'fields'->sub;
  ELSIF sub IS NOT NULL AND spec->>'type' = 'map' THEN
    spec := CASE WHEN spec->'keys' ? sub THEN spec->'of' END;
  ELSIF sub IS NOT NULL THEN
    spec := NULL;
  END IF;
  IF spec IS NULL OR spec->>'type' NOT IN ('integer', 'number', 'boolean', 'string', 'enum') THEN
    RAISE EXCEPTION 'scirag preset: "%" is not a retrieve option a preset key can stand for', option
      USING ERRCODE = '22023', HINT = 'options and their bounds: scirag.retrieve_option_schema()';
  END IF;
  RETURN spec - 'required';
END $$;
COMMENT ON FUNCTION scirag.preset_option_spec(text) IS
  'Type and bounds (min, max, values) of one retrieve option, by its path in scirag.retrieve_option_schema() ("rrf_k", "depths.vector", "rerank.entity_boost"): what a preset key that stands for that option is checked against. Raises 22023 for a path that names no plain option.';

CREATE OR REPLACE FUNCTION scirag.preset_schema()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- type: integer | number | boolean | string | enum (values); nullable: null allowed;
  -- option: the scirag.retrieve option the key becomes (scirag.retrieve_config), whose
  -- type and bounds it takes.
  SELECT jsonb_object_agg(s.key, (
           SELECT jsonb_object_agg(k.key, CASE WHEN k.value ? 'option'
                                               THEN scirag.preset_option_spec(k.value->>'option') || k.value
                                               ELSE k.value END)
           FROM jsonb_each(s.value) AS k))
  FROM jsonb_each('{
    "retrieval": {
      "dense_limit":                 {"option": "depths.vector",        "default": 19},
      "lexical_limit":               {"option": "depths.keyword",       "default": 5},
      "rrf_k":                       {"option": "rrf_k",                "default": 50},
      "top_k_rrf":                   {"option": "pool",                 "default": 75},
      "top_n_final":                 {"option": "k",                    "default": 17},
      "entity_boost":                {"option": "rerank.entity_boost",  "default": 0.05},
      "min_word_count":              {"type": "integer", "default": 150,  "min": 0, "max": 100000},
      "max_word_count":              {"type": "integer", "default": 1000, "min": 1, "max": 100000},
      "mmr_lambda":                  {"option": "mmr_lambda",           "default": 0.7},
      "min_sentence_filter_enabled": {"type": "boolean", "default": false},
      "min_sentence_count":          {"type": "integer", "default": 5,    "min": 0, "max": 1000},
      "reranker_batch_size":         {"option": "rerank.batch_size",    "default": 8},
      "reranker_max_length":         {"option": "rerank.max_length",    "default": 512},
      "profile":                     {"type": "string",  "default": null, "nullable": true},
      "enrichment_enabled":          {"type": "boolean", "default": false},
      "reranker":                    {"option": "rerank.reranker",      "default": "none"},
      "reranker_model_path":         {"type": "string",  "default": null, "nullable": true},
      "intent_bias_enabled":         {"option": "rerank.intent_bias",   "default": false},
      "intent_weight":               {"option": "rerank.intent_weight", "default": 0.05},
      "mmr_enabled":                 {"option": "mmr",                  "default": false}
    },
    "consolidation": {
      "enabled":                     {"type": "boolean", "default": false},
      "coverage_threshold":          {"type": "number",  "default": 0.5,  "min": 0, "max": 1},
      "line_gap":                    {"type": "integer", "default": 7,    "min": 0, "max": 100000},
      "min_content_length":          {"type": "integer", "default": 350,  "min": 0, "max": 1000000},
      "enrich_from_parent":          {"type": "boolean", "default": true}
    },
    "augmentation": {
      "top_n_contexts":              {"type": "integer", "default": 5,    "min": 1, "max": 1000}
    }
  }'::jsonb) AS s
$$;
COMMENT ON FUNCTION scirag.preset_schema() IS
  'The keys a preset may set, per section (retrieval, consolidation, augmentation): type, default, bounds. A key that becomes a scirag.retrieve option names it ("option") and takes its type and bounds from scirag.retrieve_option_schema(). VulcanLab''s parameters and defaults (the one home of mmr_lambda''s default, 0.7, which scirag.mmr_select uses too), plus scirag''s stage switches (enrichment_enabled, reranker, reranker_model_path, intent_bias_enabled, intent_weight, mmr_enabled, consolidation.enabled, profile), all off by default until an ablation earns them.';

CREATE OR REPLACE FUNCTION scirag.preset_defaults()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_object_agg(s.key, (SELECT jsonb_object_agg(k.key, k.value->'default') FROM jsonb_each(s.value) AS k))
  FROM jsonb_each(scirag.preset_schema()) AS s
$$;
COMMENT ON FUNCTION scirag.preset_defaults() IS 'The complete default configuration (every section, every key) built from preset_schema().';

CREATE OR REPLACE FUNCTION scirag.preset_validate(config jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  sch jsonb := scirag.preset_schema();
  merged jsonb := scirag.preset_defaults();
  sec record;
  kv record;
  spec jsonb;
  name text;
  t text;
  v jsonb;
  num numeric;
BEGIN
  IF config IS NULL THEN
    RETURN merged;
  END IF;
  IF jsonb_typeof(config) <> 'object' THEN
    RAISE EXCEPTION 'scirag preset: the configuration must be a JSON object (got %)', jsonb_typeof(config)
      USING ERRCODE = '22023';
  END IF;
  FOR sec IN SELECT * FROM jsonb_each(config) ORDER BY 1 LOOP
    IF NOT sch ? sec.key THEN
      RAISE EXCEPTION 'scirag preset: unknown section "%"', sec.key
        USING ERRCODE = '22023', HINT = 'sections are retrieval, consolidation, augmentation';
    END IF;
    IF jsonb_typeof(sec.value) <> 'object' THEN
      RAISE EXCEPTION 'scirag preset: section "%" must be a JSON object (got %)', sec.key, jsonb_typeof(sec.value)
        USING ERRCODE = '22023';
    END IF;
    FOR kv IN SELECT * FROM jsonb_each(sec.value) ORDER BY 1 LOOP
      name := sec.key || '.' || kv.key;
      spec := sch->sec.key->kv.key;
      IF spec IS NULL THEN
        RAISE EXCEPTION 'scirag preset: unknown key "%"', name
          USING ERRCODE = '22023',
                HINT = 'keys of ' || sec.key || ': ' || (SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(sch->sec.key) AS k);
      END IF;
      v := kv.value;
      t := jsonb_typeof(v);
      IF t = 'null' THEN
        IF NOT coalesce((spec->>'nullable')::boolean, false) THEN
          RAISE EXCEPTION 'scirag preset: key "%" must not be null', name USING ERRCODE = '22023';
        END IF;
      ELSIF spec->>'type' IN ('integer', 'number') THEN
        IF t <> 'number' THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be % (got %)', name,
            CASE spec->>'type' WHEN 'integer' THEN 'an integer' ELSE 'a number' END, t USING ERRCODE = '22023';
        END IF;
        num := v::text::numeric;
        IF spec->>'type' = 'integer' AND num <> trunc(num) THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be an integer (got %)', name, num USING ERRCODE = '22023';
        END IF;
        IF (num < (spec->>'min')::numeric OR num > (spec->>'max')::numeric) AND spec ? 'option' THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be between % and % (got %)', name, spec->>'min', spec->>'max', num
            USING ERRCODE = '22023',
                  HINT = format('the bounds of scirag.retrieve''s option "%s" (scirag.retrieve_option_schema())', spec->>'option');
        ELSIF num < (spec->>'min')::numeric OR num > (spec->>'max')::numeric THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be between % and % (got %)', name, spec->>'min', spec->>'max', num
            USING ERRCODE = '22023';
        END IF;
      ELSIF spec->>'type' = 'boolean' THEN
        IF t <> 'boolean' THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be a boolean (got %)', name, t USING ERRCODE = '22023';
        END IF;
      ELSIF spec->>'type' = 'string' THEN
        IF t <> 'string' THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be a string (got %)', name, t USING ERRCODE = '22023';
        END IF;
      ELSIF spec->>'type' = 'enum' THEN
        IF t <> 'string' OR NOT (spec->'values') ? (v #>> '{}') THEN
          RAISE EXCEPTION 'scirag preset: key "%" must be one of % (got %)', name, spec->'values', v
            USING ERRCODE = '22023';
        END IF;
      END IF;
      merged := jsonb_set(merged, ARRAY[sec.key, kv.key], v);
    END LOOP;
  END LOOP;
  IF (merged #>> '{retrieval,min_word_count}')::int > (merged #>> '{retrieval,max_word_count}')::int THEN
    RAISE EXCEPTION 'scirag preset: key "retrieval.min_word_count" (%) must not exceed retrieval.max_word_count (%)',
      merged #>> '{retrieval,min_word_count}', merged #>> '{retrieval,max_word_count}' USING ERRCODE = '22023';
  END IF;
  RETURN merged;
END $$;
COMMENT ON FUNCTION scirag.preset_validate(jsonb) IS
  'Checks a (partial) preset configuration against preset_schema() and returns it completed with the defaults. An unknown section or key, a wrong type or an out-of-range value raises an error naming the key (SQLSTATE 22023).';

CREATE OR REPLACE FUNCTION scirag.preset_check(config jsonb)
RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM scirag.preset_validate(config);   -- raises, naming the key, when invalid
  RETURN true;
END $$;
COMMENT ON FUNCTION scirag.preset_check(jsonb) IS
  'CHECK-constraint form of preset_validate: true for a valid configuration, otherwise the error that names the key.';

REVOKE ALL ON FUNCTION scirag.preset_option_spec(text), scirag.preset_schema(), scirag.preset_defaults(), scirag.preset_validate(jsonb),
  scirag.preset_check(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.preset_option_spec(text), scirag.preset_schema(), scirag.preset_defaults(), scirag.preset_validate(jsonb),
  scirag.preset_check(jsonb) TO scirag_reader, scirag_loader, scirag_owner;
-- CREATE OR REPLACE resets the wall's settings of API functions (functions/reader_wall_apply)
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
