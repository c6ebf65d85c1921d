-- Deploy scirag:functions/preset_config
-- What a preset may say: VulcanLab's retrieval / consolidation / augmentation
-- parameters with their defaults, plus scirag's stage switches. One schema, used
-- by the presets table's CHECK, by preset_get and by scirag.consolidate's options.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.preset_schema()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- type: integer | number | boolean | string | enum (values); nullable: null allowed.
  SELECT '{
    "retrieval": {
      "dense_limit":                 {"type": "integer", "default": 19,   "min": 1, "max": 10000},
      "lexical_limit":               {"type": "integer", "default": 5,    "min": 0, "max": 10000},
      "rrf_k":                       {"type": "integer", "default": 50,   "min": 1, "max": 10000},
      "top_k_rrf":                   {"type": "integer", "default": 75,   "min": 1, "max": 10000},
      "top_n_final":                 {"type": "integer", "default": 17,   "min": 1, "max": 1000},
      "entity_boost":                {"type": "number",  "default": 0.05, "min": 0, "max": 1},
      "min_word_count":              {"type": "integer", "default": 150,  "min": 0, "max": 100000},
      "max_word_count":              {"type": "integer", "default": 1000, "min": 1, "max": 100000},
      "mmr_lambda":                  {"type": "number",  "default": 0.7,  "min": 0, "max": 1},
      "min_sentence_filter_enabled": {"type": "boolean", "default": false},
      "min_sentence_count":          {"type": "integer", "default": 5,    "min": 0, "max": 1000},
      "reranker_batch_size":         {"type": "integer", "default": 8,    "min": 1, "max": 1024},
      "reranker_max_length":         {"type": "integer", "default": 512,  "min": 8, "max": 8192},
      "profile":                     {"type": "string",  "default": null, "nullable": true},
      "enrichment_enabled":          {"type": "boolean", "default": false},
      "reranker":                    {"type": "enum",    "default": "none", "values": ["none", "llm", "cross_encoder"]},
      "reranker_model_path":         {"type": "string",  "default": null, "nullable": true},
      "intent_bias_enabled":         {"type": "boolean", "default": false},
      "intent_weight":               {"type": "number",  "default": 0.05, "min": 0, "max": 1},
      "mmr_enabled":                 {"type": "boolean", "default": false}
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
  }'::jsonb
$$;
COMMENT ON FUNCTION scirag.preset_schema() IS
  'The keys a preset may set, per section (retrieval, consolidation, augmentation): type, default, bounds. VulcanLab''s parameters and defaults, plus scirag''s stage switches (enrichment_enabled, reranker, reranker_model_path, intent_bias_enabled, intent_weight, mmr_enabled, consolidation.enabled, profile), all off by default until an ablation earns them.';

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
        IF num < (spec->>'min')::numeric OR num > (spec->>'max')::numeric THEN
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

REVOKE ALL ON FUNCTION scirag.preset_schema(), scirag.preset_defaults(), scirag.preset_validate(jsonb),
  scirag.preset_check(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.preset_schema(), scirag.preset_defaults(), scirag.preset_validate(jsonb),
  scirag.preset_check(jsonb) TO scirag_reader, scirag_loader, scirag_owner;
COMMIT;
