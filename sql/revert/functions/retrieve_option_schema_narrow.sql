-- Revert scirag:functions/retrieve_option_schema_narrow: scirag.retrieve_option_schema as
-- functions/retrieve_option_schema defines it (retrieve_option_schema.sql), without narrow_only.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_option_schema()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Every option retrieve understands, with its type and bounds (issue 13: nothing a
  -- reader sends is unbounded). "map" options are objects whose values have the type
  -- given by "of"; "layers" lists are arrays of layer names. "required" marks the keys
  -- every resolved configuration must hold (a profile row has them: issue 16, no
  -- defaults in code that could disagree with the rows).
  SELECT '{
    "k":               {"type": "integer", "min": 1, "max": 1000, "required": true},
    "layers":          {"type": "layers", "required": true},
    "_fail_layers":    {"type": "layers"},
    "weights":         {"type": "map", "keys": ["vector", "keyword", "graph", "community", "hyde"],
                        "of": {"type": "number", "min": 0, "max": 100}, "required": true},
    "budgets_ms":      {"type": "map", "keys": ["embed", "vector", "keyword", "graph", "community", "hyde"],
                        "of": {"type": "number", "min": 0, "max": 600000}},
    "deadline_ms":     {"type": "number", "min": 0, "max": 600000},
    "optional_layers": {"type": "layers"},
    "depth":           {"type": "integer", "min": 1, "max": 1000, "required": true},
    "depths":          {"type": "map", "keys": ["vector", "keyword"], "of": {"type": "integer", "min": 0, "max": 1000}},
    "fusion":          {"type": "enum", "values": ["rrf", "score"], "required": true},
    "keyword_scale":   {"type": "enum", "values": ["max", "minmax", "auto"], "required": true},
    "proximity":       {"type": "number", "min": 0, "max": 100},
    "rrf_k":           {"type": "integer", "min": 1, "max": 10000, "required": true},
    "pool":            {"type": "integer", "min": 1, "max": 1000},
    "rerank":          {"type": "record", "fields": {
                          "reranker":      {"type": "enum", "values": ["none", "llm", "cross_encoder"]},
                          "entity_boost":  {"type": "number", "min": 0, "max": 1},
                          "entities":      {"type": "strings", "max": 32},
                          "intent_bias":   {"type": "boolean"},
                          "intent":        {"type": "string"},
                          "intent_weight": {"type": "number", "min": 0, "max": 1},
                          "batch_size":    {"type": "integer", "min": 1, "max": 1024},
                          "max_length":    {"type": "integer", "min": 1, "max": 8192}}},
    "mmr":             {"type": "boolean"},
    "mmr_lambda":      {"type": "number", "min": 0, "max": 1},
    "preset":          {"type": "string"}
  }'::jsonb
$$;
COMMENT ON FUNCTION scirag.retrieve_option_schema() IS
  'The options scirag.retrieve accepts (and the keys a retrieval profile holds): type and bounds of each; "required" keys every profile row must hold. Questions are at most 4000 characters (scirag.check_question).';

REVOKE ALL ON FUNCTION scirag.retrieve_option_schema() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_option_schema() TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
