-- Deploy scirag:functions/retrieve_config_check
-- Split (issue 28): scirag.retrieve_config_check, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_config_check` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_config_check(cfg jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  sch jsonb := scirag.retrieve_option_schema();
  layer_names jsonb := '["vector", "keyword", "graph", "community", "hyde"]';
  spec jsonb;
  t text;
  v jsonb;
  name text;
BEGIN
  IF cfg IS NULL OR jsonb_typeof(cfg) <> 'object' THEN
    RAISE EXCEPTION 'scirag.retrieve: the configuration must be a JSON object (got %)', coalesce(jsonb_typeof(cfg), 'null')
      USING ERRCODE = '22023';
  END IF;
  -- Complete: every required key (a profile row holds them all; issue 16).
  SELECT x INTO name FROM jsonb_each(sch) AS s(x, spec)
  WHERE (s.spec->>'required')::boolean AND (NOT cfg ? s.x OR cfg->s.x = 'null') ORDER BY x LIMIT 1;
  IF name IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: the configuration of profile "%" lacks "%"', coalesce(left(cfg->>'profile', 100), '?'), name
      USING ERRCODE = '22023',
            HINT = 'every retrieval profile row holds ' || (SELECT string_agg(x, ', ' ORDER BY x) FROM jsonb_each(sch) AS s(x, spec)
                                                            WHERE (s.spec->>'required')::boolean AND x <> 'k');
  END IF;
  -- Every key of the configuration, whatever set it (profile, preset, option). Set-based:
  -- the checks run on every call of retrieve and of its parts, so they find the first
  -- offending key in one query and only that one goes through the message branches.
  SELECT kv.key, sch->kv.key INTO name, spec FROM jsonb_each(cfg) WITH ORDINALITY AS kv(key, value, o)
  WHERE sch->kv.key->>'type' IN ('record', 'map') AND jsonb_typeof(kv.value) <> 'object' ORDER BY kv.o LIMIT 1;
  IF name IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: option "%" must be a JSON object (got %)', name, jsonb_typeof(cfg->name)
      USING ERRCODE = '22023';
  END IF;
  SELECT kv.key, sub.key, sch->kv.key INTO name, t, spec
  FROM jsonb_each(cfg) WITH ORDINALITY AS kv(key, value, o), jsonb_each(kv.value) WITH ORDINALITY AS sub(key, value, so)
  WHERE sch->kv.key->>'type' IN ('record', 'map')
    AND NOT coalesce(sch->kv.key->'fields', sch->kv.key->'keys') ? sub.key
  ORDER BY kv.o, sub.so LIMIT 1;
  IF name IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown key "%" in option "%"', left(t, 100), name
      USING ERRCODE = '22023', HINT = 'keys of ' || name || ': ' ||
        CASE WHEN spec->>'type' = 'record'
             THEN (SELECT string_agg(x, ', ' ORDER BY x) FROM jsonb_object_keys(spec->'fields') AS x)
             ELSE (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(spec->'keys') AS x) END;
  END IF;
  -- The first value outside its type or bounds (leaves: plain options and the values of
  -- records and maps).
  SELECT l.name, l.spec, l.value INTO name, spec, v
  FROM (SELECT kv.key AS name, sch->kv.key AS spec, kv.value, kv.o, 0::bigint AS so
        FROM jsonb_each(cfg) WITH ORDINALITY AS kv(key, value, o)
        WHERE sch ? kv.key AND sch->kv.key->>'type' NOT IN ('record', 'map')
        UNION ALL
        SELECT kv.key || '.' || sub.key, coalesce(sch->kv.key->'fields'->sub.key, sch->kv.key->'of'), sub.value, kv.o, sub.so
        FROM jsonb_each(cfg) WITH ORDINALITY AS kv(key, value, o), jsonb_each(kv.value) WITH ORDINALITY AS sub(key, value, so)
        WHERE sch->kv.key->>'type' IN ('record', 'map')) l
  WHERE NOT CASE l.spec->>'type'
    WHEN 'integer' THEN jsonb_typeof(l.value) = 'number'
                        AND CASE WHEN jsonb_typeof(l.value) = 'number' THEN
                              l.value::text::numeric = trunc(l.value::text::numeric)
                              AND l.value::text::numeric BETWEEN (l.spec->>'min')::numeric AND (l.spec->>'max')::numeric END
    WHEN 'number'  THEN jsonb_typeof(l.value) = 'number'
                        AND CASE WHEN jsonb_typeof(l.value) = 'number' THEN
                              l.value::text::numeric BETWEEN (l.spec->>'min')::numeric AND (l.spec->>'max')::numeric END
    WHEN 'boolean' THEN jsonb_typeof(l.value) = 'boolean'
    WHEN 'string'  THEN jsonb_typeof(l.value) = 'string'
    WHEN 'enum'    THEN jsonb_typeof(l.value) = 'string' AND (l.spec->'values') ? (l.value #>> '{}')
    WHEN 'strings' THEN jsonb_typeof(l.value) = 'array'
                        AND CASE WHEN jsonb_typeof(l.value) = 'array' THEN
                              jsonb_array_length(l.value) <= (l.spec->>'max')::int
                              AND NOT jsonb_path_exists(l.value, '$[*] ? (@.type() != "string")') END
    WHEN 'layers'  THEN jsonb_typeof(l.value) = 'array'
                        AND CASE WHEN jsonb_typeof(l.value) = 'array' THEN layer_names @> l.value END
    ELSE true END
  ORDER BY l.o, l.so LIMIT 1;
  IF name IS NOT NULL THEN
    t := jsonb_typeof(v);
    IF spec->>'type' IN ('integer', 'number') THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be % between % and % (got %)', name,
        CASE spec->>'type' WHEN 'integer' THEN 'an integer' ELSE 'a number' END, spec->>'min', spec->>'max',
        CASE WHEN t = 'number' THEN left(v::text::numeric::text, 40) ELSE t END
        USING ERRCODE = '22023';
    ELSIF spec->>'type' = 'boolean' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be true or false (got %)', name, t USING ERRCODE = '22023';
    ELSIF spec->>'type' IN ('string', 'enum') AND t <> 'string' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be a string (got %)', name, t USING ERRCODE = '22023';
    ELSIF spec->>'type' = 'enum' THEN
      RAISE EXCEPTION 'scirag.retrieve: unknown % "%"', name, left(v #>> '{}', 100)
        USING ERRCODE = '22023', HINT = name || ' is ' || (SELECT string_agg(x, ' or ') FROM jsonb_array_elements_text(spec->'values') AS x);
    ELSIF spec->>'type' = 'strings' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be an array of at most % strings', name, spec->>'max'
        USING ERRCODE = '22023';
    ELSIF t <> 'array' THEN   -- layers
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be an array of layer names (got %)', name, t
        USING ERRCODE = '22023', HINT = 'layers are vector, keyword, graph, community, hyde';
    ELSE
      SELECT x INTO v FROM jsonb_array_elements(v) AS x WHERE NOT layer_names @> jsonb_build_array(x) LIMIT 1;
      RAISE EXCEPTION 'scirag.retrieve: unknown layer % in options.%', left(v::text, 100), name
        USING ERRCODE = '22023', HINT = 'layers are vector, keyword, graph, community, hyde';
    END IF;
  END IF;
  -- Every layer that runs needs its fusion weight (the profile rows carry all five).
  SELECT x INTO name FROM jsonb_array_elements_text(cfg->'layers') AS x WHERE NOT cfg->'weights' ? x LIMIT 1;
  IF name IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: no weight for layer "%" in the configuration of profile "%"', name,
      coalesce(left(cfg->>'profile', 100), '?')
      USING ERRCODE = '22023', HINT = 'SELECT name, config->''weights'' FROM scirag.retrieval_profiles';
  END IF;
  RETURN cfg;
END $$;
COMMENT ON FUNCTION scirag.retrieve_config_check(jsonb) IS
  'Checks a resolved retrieval configuration and returns it: every key against scirag.retrieve_option_schema() (type and bounds; the error names the option and its bounds), every required key present, a weight for every layer. SQLSTATE 22023. The one place where retrieval options are bounded: retrieve_config and the stages callable on their own (retrieve_layers, retrieve_fuse) run it.';

REVOKE ALL ON FUNCTION scirag.retrieve_config_check(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_config_check(jsonb) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
