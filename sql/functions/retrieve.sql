-- Deploy scirag:functions/retrieve
-- Reworked (issue 16): retrieve in parts, each callable and testable on its own, composed
-- by scirag.retrieve (whose signature, results and trace keys are unchanged):
--   retrieve_config        profile + preset + options -> one validated configuration
--                          (retrieve_config_check: the one place of every option's bounds)
--   retrieve_layers        runs the configured layers -> their ranked lists (layer_hit[])
--   retrieve_fuse          fuses them into one ranked candidate pool (ranked_hit[])
--   retrieve_rerank, retrieve_mmr   the optional post-fusion stages
--   retrieve_rows          the result rows with their citations
-- Budgets are honest: deadline_ms is a total deadline after which the optional layers
-- that have not started are skipped (per-layer budgets_ms still only discard a late
-- result: nothing in PL/pgSQL can stop a running statement short of cancelling it).
-- A failing stage leaves its SQLSTATE and message in the trace; a cancel or statement
-- timeout (57014) is never swallowed. The question-length bound is scirag.check_question.
-- Reworked again (issue 16): retrieve_config turns a preset's retrieval keys into options
-- by the option each names in scirag.preset_schema(), so the mapping (and, through
-- retrieve_option_schema(), the bounds) is written once.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.breadcrumb(title text, section_path text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Documents often open with their title as a top heading: say it once.
  SELECT nullif(CASE WHEN section_path = title THEN ''
                     WHEN starts_with(section_path, title || ' > ') THEN substr(section_path, length(title) + 4)
                     ELSE section_path END, '')
$$;
COMMENT ON FUNCTION scirag.breadcrumb(text, text) IS 'Section path without a leading heading that repeats the document title (NULL when nothing is left).';

CREATE OR REPLACE FUNCTION scirag.citation(d scirag.documents, c scirag.chunks)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'document_id', d.id, 'external_id', d.external_id, 'chunk_id', c.id, 'title', d.title,
    'authors', to_jsonb(d.authors), 'year', d.year, 'doi', d.doi, 'license', d.license::text,
    'retracted', coalesce(d.retracted, false),
    'section_path', scirag.breadcrumb(d.title, c.section_path),
    'pages', CASE WHEN c.page_start IS NOT NULL THEN
               CASE WHEN c.page_end IS DISTINCT FROM c.page_start THEN c.page_start || '-' || c.page_end
                    ELSE c.page_start::text END END,
    'lines', CASE WHEN c.line_start IS NOT NULL THEN c.line_start || '-' || coalesce(c.line_end, c.line_start) END,
    -- a citation of a retracted document says so (issue 14), also when exclude_retracted is off
    'cite', CASE WHEN d.retracted THEN 'RETRACTED: ' ELSE '' END || concat_ws(', ',
              CASE WHEN cardinality(d.authors) > 2 THEN d.authors[1] || ' et al.'
                   ELSE array_to_string(d.authors, ' & ') END || CASE WHEN d.year IS NOT NULL THEN ' (' || d.year || ')' END,
              d.title,
              scirag.breadcrumb(d.title, c.section_path),
              CASE WHEN c.page_start IS NOT NULL THEN 'p. ' || c.page_start
                   WHEN c.line_start IS NOT NULL THEN 'lines ' || c.line_start || '-' || coalesce(c.line_end, c.line_start) END,
              CASE WHEN d.doi IS NOT NULL THEN 'doi:' || d.doi END)))
$$;
COMMENT ON FUNCTION scirag.citation(scirag.documents, scirag.chunks) IS
  'Citation of a chunk: document identity, retracted (true/false), section path, page or line span, and a human-readable "cite" string (prefixed "RETRACTED: " for a retracted document).';

CREATE OR REPLACE FUNCTION scirag.last_trace()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT nullif(current_setting('scirag.last_trace', true), '')::jsonb $$;
COMMENT ON FUNCTION scirag.last_trace() IS
  'Trace of the last scirag.retrieve call in this session: per stage its status (ok, empty, error, timeout, skipped, disabled), duration and candidate count; an error also its sqlstate and message ("error", with quoted values and the question''s words removed), a skipped stage its reason (deadline, no query embedding, not installed, empty scope). Content-free: never query or chunk text.';

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

CREATE OR REPLACE FUNCTION scirag.retrieve_config(profile text, k int DEFAULT 10, options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  sch jsonb := scirag.retrieve_option_schema();
  opts jsonb := coalesce(options, '{}');
  cfg jsonb;
  pre jsonb;
  tr jsonb;
  kv record;
  name text;
BEGIN
  IF jsonb_typeof(opts) <> 'object' THEN
    RAISE EXCEPTION 'scirag.retrieve: options must be a JSON object (got %)', jsonb_typeof(opts) USING ERRCODE = '22023';
  END IF;
  SELECT p.config INTO cfg FROM scirag.retrieval_profiles p WHERE p.name = profile;
  IF cfg IS NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown profile "%"', left(profile, 100)
      USING ERRCODE = '22023', HINT = 'SELECT name FROM scirag.retrieval_profiles';
  END IF;
  FOR kv IN SELECT * FROM jsonb_each(opts) LOOP
    IF NOT sch ? kv.key OR kv.key = 'k' THEN   -- k is retrieve's argument, not an option
      RAISE EXCEPTION 'scirag.retrieve: unknown option "%"', left(kv.key, 100) USING ERRCODE = '22023',
        HINT = 'options are ' || (SELECT string_agg(x, ', ' ORDER BY x) FROM jsonb_object_keys(sch) AS x
                                   WHERE x <> 'k');
    END IF;
  END LOOP;
  IF opts ? 'preset' AND jsonb_typeof(opts->'preset') <> 'string' THEN
    RAISE EXCEPTION 'scirag.retrieve: option "preset" must be a string (got %)', jsonb_typeof(opts->'preset')
      USING ERRCODE = '22023';
  END IF;
  -- The maps merge key by key, so they must be objects before the merge.
  FOREACH name IN ARRAY ARRAY['weights', 'budgets_ms', 'depths', 'rerank'] LOOP
    IF opts ? name AND jsonb_typeof(opts->name) <> 'object' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be a JSON object (got %)', name, jsonb_typeof(opts->name)
        USING ERRCODE = '22023';
    END IF;
  END LOOP;
  IF opts->'rerank' ? 'model_path' THEN
    RAISE EXCEPTION 'scirag.retrieve: option "rerank.model_path" is not accepted from callers'
      USING ERRCODE = '22023', HINT = 'the admin sets the model folder in scirag.settings (reranker_model_path)';
  END IF;
  -- per-call options override the profile; weights and budgets merge key by key
  cfg := cfg || (opts - 'weights' - 'budgets_ms')
             || jsonb_build_object('weights', coalesce(cfg->'weights', '{}') || coalesce(opts->'weights', '{}'),
                                   'budgets_ms', coalesce(cfg->'budgets_ms', '{}') || coalesce(opts->'budgets_ms', '{}'),
                                   'k', k, 'profile', profile);
  -- A preset (VulcanLab-style, scirag.presets) sets the candidate depths, RRF k, the
  -- pool the later stages choose from, the number of results and those stages: each
  -- retrieval key that names a retrieve option in scirag.preset_schema() (the one place
  -- of that mapping, and of its bounds: retrieve_option_schema()) sets that option;
  -- "depths.vector" sets one key of the depths map. Its reranker_model_path is not used:
  -- the model folder is an admin setting.
  IF opts ? 'preset' THEN
    pre := scirag.preset_get(opts->>'preset')->'retrieval';
    tr := jsonb_build_object('preset', opts->>'preset');
    FOR kv IN SELECT k.key, string_to_array(k.value->>'option', '.') AS path
              FROM jsonb_each(scirag.preset_schema()->'retrieval') AS k WHERE k.value ? 'option' LOOP
      CONTINUE WHEN coalesce(pre->kv.key, 'null') = 'null';
      IF cardinality(kv.path) = 2 AND NOT tr ? kv.path[1] THEN
        tr := tr || jsonb_build_object(kv.path[1], '{}'::jsonb);
      END IF;
      tr := jsonb_set(tr, kv.path, pre->kv.key);
    END LOOP;
    -- the rerank stage runs only when the preset turns one of its parts on
    IF NOT (tr #>> '{rerank,reranker}' <> 'none' OR coalesce((tr #>> '{rerank,intent_bias}')::boolean, false)
            OR coalesce((tr #>> '{rerank,entity_boost}')::float8, 0) > 0) THEN
      tr := tr - 'rerank';
    END IF;
    -- explicit options still win (the maps were merged key by key above)
    cfg := cfg || tr || (opts - 'preset' - 'weights' - 'budgets_ms');
  END IF;
  IF cfg->'k' = 'null' OR NOT cfg ? 'k' THEN
    RAISE EXCEPTION 'scirag.retrieve: k must not be null' USING ERRCODE = '22023';
  END IF;
  RETURN scirag.retrieve_config_check(cfg);
END $$;
COMMENT ON FUNCTION scirag.retrieve_config(text, int, jsonb) IS
  'The one place where a retrieval profile, a preset (options.preset) and per-call options become one configuration: profile, then preset (each retrieval key sets the option it names in scirag.preset_schema()), then explicit options; weights and budgets_ms merge key by key; k is the result count (a preset''s top_n_final replaces it); "profile" names the row. Checked by scirag.retrieve_config_check (every option within the bounds of retrieve_option_schema(), every required key there, SQLSTATE 22023). A caller''s rerank.model_path is refused (the model folder is an admin setting).';

CREATE OR REPLACE FUNCTION scirag.trace_error(stage text, sqlstate text, message text, query text, ms double precision)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  msg text := left(coalesce(message, ''), 300);
  w text;
BEGIN
  -- Traces are content-free (DESIGN.md section 6): an error message can quote what it
  -- choked on, so quoted values and every word of the question are removed from it.
  msg := regexp_replace(msg, '"[^"]*"', '"…"', 'g');
  msg := regexp_replace(msg, '''[^'']*''', '''…''', 'g');
  FOR w IN SELECT DISTINCT m[1] FROM regexp_matches(coalesce(query, ''), '(\w{3,})', 'g') AS m LIMIT 500 LOOP
    msg := regexp_replace(msg, '\m' || w || '\M', '…', 'gi');
  END LOOP;
  RETURN jsonb_build_object('stage', stage, 'status', 'error', 'sqlstate', sqlstate, 'error', msg,
                            'ms', round(ms::numeric, 2), 'candidates', 0);
END $$;
COMMENT ON FUNCTION scirag.trace_error(text, text, text, text, double precision) IS
  'The trace entry of a stage that failed: stage, status error, its SQLSTATE and message (at most 300 characters, quoted values and the question''s words replaced by …), ms, candidates 0.';

CREATE OR REPLACE FUNCTION scirag.retrieve_layers(
  query text, cfg jsonb, query_embedding public.vector DEFAULT NULL, started timestamptz DEFAULT NULL,
  OUT hits scirag.layer_hit[], OUT stages jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  known text[] := ARRAY['vector', 'keyword', 'graph', 'community', 'hyde'];
  wanted text[];
  optional text[];
  run_order text[];
  fail_layers text[];
  layer text;
  depth int;
  budget double precision;
  deadline timestamptz;
  qvec public.vector := query_embedding;
  embed_tried boolean := query_embedding IS NOT NULL;
  got scirag.layer_hit[];
  status text;
  reason text;
  err jsonb;
  t0 timestamptz;
  ms double precision;
  e_state text;
  e_msg text;
BEGIN
  PERFORM scirag.check_question(query, 'scirag.retrieve_layers');
  cfg := scirag.retrieve_config_check(cfg);
  hits := '{}';
  stages := '[]';
  wanted := ARRAY(SELECT jsonb_array_elements_text(cfg->'layers'));
  optional := ARRAY(SELECT jsonb_array_elements_text(coalesce(cfg->'optional_layers', '[]')));
  -- "_fail_layers" forces a layer to error: a drill for degradation tests and demos
  fail_layers := ARRAY(SELECT jsonb_array_elements_text(coalesce(cfg->'_fail_layers', '[]')));
  depth := greatest((cfg->>'depth')::int, (cfg->>'k')::int);
  -- The deadline counts from the start of the call (retrieve passes its own start).
  -- Required layers run first, so what the deadline skips is only ever optional.
  deadline := CASE WHEN cfg ? 'deadline_ms'
                   THEN coalesce(started, clock_timestamp()) + (cfg->>'deadline_ms')::float8 * interval '1 millisecond'
                   ELSE 'infinity' END;
  run_order := ARRAY(SELECT l FROM unnest(known) WITH ORDINALITY AS u(l, o)
                     WHERE l = ANY (wanted) ORDER BY l = ANY (optional), o);

  FOREACH layer IN ARRAY run_order LOOP
    got := '{}';
    status := NULL;
    reason := NULL;
    err := NULL;
    IF layer = ANY (optional) AND clock_timestamp() >= deadline THEN
      stages := stages || jsonb_build_object('stage', layer, 'status', 'skipped', 'reason', 'deadline',
                                             'ms', 0, 'candidates', 0);
      CONTINUE;
    END IF;
    -- One query embedding per call, made when the first layer that needs it starts.
    IF layer IN ('vector', 'community') AND NOT embed_tried THEN
      embed_tried := true;
      t0 := clock_timestamp();
      BEGIN
        qvec := scirag.embed_query(query);
        stages := stages || jsonb_build_object('stage', 'embed', 'status', 'ok',
          'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', 0);
      EXCEPTION
        WHEN query_canceled THEN
          RAISE;   -- a cancel or statement timeout ends the call (OTHERS would not catch it either)
        WHEN OTHERS THEN
          GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
          stages := stages || scirag.trace_error('embed', e_state, e_msg, query,
                                                 extract(epoch FROM clock_timestamp() - t0) * 1000);
      END;
    END IF;
    t0 := clock_timestamp();
    BEGIN
      IF layer = ANY (fail_layers) THEN
        RAISE EXCEPTION 'forced failure of layer %', layer USING ERRCODE = 'P0001';
      END IF;
      IF layer = 'vector' THEN
        IF qvec IS NULL THEN
          status := 'skipped';
          reason := 'no query embedding';
        ELSE
          got := ARRAY(SELECT ROW('vector', v.chunk_id, v.rank, 1 - v.distance)::scirag.layer_hit
                       FROM scirag.search_vector(qvec, coalesce((cfg->'depths'->>'vector')::int, depth)) v);
        END IF;
      ELSIF layer = 'keyword' THEN
        got := ARRAY(SELECT ROW('keyword', kw.chunk_id, kw.rank, kw.score)::scirag.layer_hit
                     FROM scirag.search_keyword(query, coalesce((cfg->'depths'->>'keyword')::int, depth),
                                                (cfg->>'proximity')::float8) kw);
      ELSIF layer = 'hyde' THEN
        got := ARRAY(SELECT ROW('hyde', h.chunk_id, h.rank, 1 - h.distance)::scirag.layer_hit
                     FROM scirag.search_hyde(query, depth) h);
      ELSIF layer = 'graph' THEN
        -- dynamic SQL: the graph layer is an optional part of a deployment
        EXECUTE 'SELECT coalesce(array_agg(ROW(''graph'', g.chunk_id, g.rank, NULL)::scirag.layer_hit), ''{}'')
                 FROM scirag.search_graph($1, $2) g' INTO got USING query, depth;
      ELSIF layer = 'community' THEN
        IF qvec IS NULL THEN
          status := 'skipped';
          reason := 'no query embedding';
        ELSE
          EXECUTE 'SELECT coalesce(array_agg(ROW(''community'', m.chunk_id, m.rank, NULL)::scirag.layer_hit), ''{}'')
                   FROM scirag.search_community_chunks($1, $2) m' INTO got USING qvec, depth;
        END IF;
      END IF;
    EXCEPTION
      WHEN query_canceled THEN
        RAISE;   -- a cancel or statement timeout ends the call: never degrade it into an empty layer
      WHEN undefined_function THEN
        status := 'skipped';  -- layer not installed in this deployment
        reason := 'not installed';
        got := '{}';
      WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
        err := scirag.trace_error(layer, e_state, e_msg, query, extract(epoch FROM clock_timestamp() - t0) * 1000);
        got := '{}';
    END;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    budget := coalesce((cfg->'budgets_ms'->>layer)::float8, 'infinity');
    IF err IS NOT NULL THEN
      stages := stages || err;
      CONTINUE;
    END IF;
    IF status IS NULL THEN
      IF ms > budget THEN
        status := 'timeout';   -- over its budget: contributes nothing
        got := '{}';
      ELSIF cardinality(got) = 0 THEN
        status := 'empty';
      ELSE
        status := 'ok';
      END IF;
    END IF;
    hits := hits || got;
    stages := stages || jsonb_strip_nulls(jsonb_build_object('stage', layer, 'status', status, 'reason', reason,
      'ms', round(ms::numeric, 2), 'candidates', cardinality(got)));
  END LOOP;
  FOREACH layer IN ARRAY known LOOP
    IF NOT layer = ANY (wanted) THEN
      stages := stages || jsonb_build_object('stage', layer, 'status', 'disabled', 'ms', 0, 'candidates', 0);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.retrieve_layers(text, jsonb, public.vector, timestamptz) IS
  'The layer runner: runs the layers of a configuration (from scirag.retrieve_config; checked again here) inside the caller''s scope and returns their ranked lists (hits: layer, chunk, rank, score) and one trace entry per stage. Required layers run first; once deadline_ms has passed since started (default: now) the optional_layers not yet started are skipped (status skipped, reason deadline). A layer over its budgets_ms contributes nothing (timeout); a failing layer contributes nothing and its trace entry carries its sqlstate and message; a cancel or statement timeout (57014) is raised, never swallowed. The query embedding (made here unless given) is shared by the vector and community layers.';

CREATE OR REPLACE FUNCTION scirag.retrieve_fuse(hits scirag.layer_hit[], cfg jsonb, OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  fusion text;
  kw_scale text;
  pool int;
  t0 timestamptz := clock_timestamp();
BEGIN
  cfg := scirag.retrieve_config_check(cfg);
  hits := coalesce(hits, '{}');
  fusion := cfg->>'fusion';
  -- BM25 scaling for score fusion. 'auto' is min-max when the graph or community layer
  -- found anything (their hits must be able to outrank the keyword tail: the demo's
  -- multi-hop answer ranks 9th with min-max, 12th with max) and max otherwise, where
  -- max is what measured best (SciFact, SciTab): deep then ranks exactly as interactive.
  kw_scale := cfg->>'keyword_scale';
  IF kw_scale = 'auto' THEN
    kw_scale := CASE WHEN EXISTS (SELECT 1 FROM unnest(hits) h WHERE h.layer IN ('graph', 'community'))
                          THEN 'minmax' ELSE 'max' END;
  END IF;
  -- One candidate pool: k, or a preset's top_k_rrf when later stages choose from it.
  pool := greatest((cfg->>'k')::int, coalesce((cfg->>'pool')::int, (cfg->>'k')::int));
  IF fusion = 'rrf' THEN
    ranked := ARRAY(SELECT ROW(f.chunk_id, f.score, f.layers)::scirag.ranked_hit
                    FROM scirag.fuse_rrf(hits, cfg->'weights', (cfg->>'rrf_k')::int) f
                    ORDER BY f.score DESC, f.chunk_id LIMIT pool);
  ELSE
    ranked := ARRAY(SELECT ROW(f.chunk_id, f.score, f.layers)::scirag.ranked_hit
                    FROM scirag.fuse_scores(hits, cfg->'weights', kw_scale) f
                    ORDER BY f.score DESC, f.chunk_id LIMIT pool);
  END IF;
  stage := jsonb_build_object('stage', 'fuse', 'status', 'ok', 'method', fusion,
    'keyword_scale', CASE WHEN fusion = 'score' THEN kw_scale END,
    'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2),
    'candidates', (SELECT count(DISTINCT h.chunk_id) FROM unnest(hits) h));
END $$;
COMMENT ON FUNCTION scirag.retrieve_fuse(scirag.layer_hit[], jsonb) IS
  'Fusion stage: the layers'' ranked lists into one candidate pool (best first, at most max(k, pool) chunks) by the configuration''s fusion (score: scirag.fuse_scores with keyword_scale, auto resolved; rrf: scirag.fuse_rrf with rrf_k) and its weights, plus the stage''s trace entry.';

CREATE OR REPLACE FUNCTION scirag.retrieve_rerank(query text, candidates scirag.ranked_hit[], options jsonb,
                                                  OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  ids bigint[];
  got_ids bigint[];
  status text;
  t0 timestamptz := clock_timestamp();
  e_state text;
  e_msg text;
BEGIN
  ranked := coalesce(candidates, '{}');
  IF cardinality(ranked) = 0 THEN
    RETURN;   -- nothing to rerank: no stage
  END IF;
  ids := ARRAY(SELECT c.chunk_id FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o) ORDER BY c.o);
  BEGIN
    SELECT array_agg(r.chunk_id ORDER BY r.score DESC, r.chunk_id), min(r.status)
      INTO got_ids, status
    FROM scirag.rerank(query, ids,
                       ARRAY(SELECT ch.content FROM unnest(ids) WITH ORDINALITY AS x(id, o)
                             JOIN scirag.chunks ch ON ch.id = x.id ORDER BY x.o),
                       coalesce(options, '{}') || jsonb_build_object('fused_scores',
                         to_jsonb(ARRAY(SELECT c.score FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o)
                                        ORDER BY c.o)))) r;
    -- A reranker that returns another set of chunks leaves the fused order as it was.
    IF got_ids IS NOT NULL AND cardinality(got_ids) = cardinality(ids) THEN
      ranked := ARRAY(SELECT c FROM unnest(ranked) AS c ORDER BY array_position(got_ids, c.chunk_id));
    END IF;
    stage := jsonb_build_object('stage', 'rerank', 'status', coalesce(status, 'empty'),
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', cardinality(ranked));
  EXCEPTION
    WHEN query_canceled THEN
      RAISE;
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
      stage := scirag.trace_error('rerank', e_state, e_msg, query, extract(epoch FROM clock_timestamp() - t0) * 1000)
               || jsonb_build_object('candidates', cardinality(ranked));
  END;
END $$;
COMMENT ON FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) IS
  'Rerank stage: reorders a candidate list with scirag.rerank (options: retrieve''s rerank option), the fused scores passed along; chunk text read through row-level security. A reranker that fails (trace: error, its sqlstate and message) or returns another set leaves the order as it was; a cancel or statement timeout is raised. Empty input: no stage (stage NULL).';

CREATE OR REPLACE FUNCTION scirag.retrieve_mmr(candidates scirag.ranked_hit[], k int, mmr_lambda double precision,
                                               OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  got_ids bigint[];
  n int := cardinality(coalesce(candidates, '{}'));
  t0 timestamptz := clock_timestamp();
  e_state text;
  e_msg text;
BEGIN
  ranked := coalesce(candidates, '{}');
  IF n <= k THEN
    RETURN;   -- nothing to choose between: no stage
  END IF;
  BEGIN
    -- relevance = list position (the fused or reranked order), highest first
    IF mmr_lambda IS NULL THEN
      got_ids := ARRAY(SELECT m.chunk_id FROM scirag.mmr_select(
                         ARRAY(SELECT c.chunk_id FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o) ORDER BY c.o),
                         ARRAY(SELECT n - o + 1.0 FROM generate_series(1, n) AS o), k) m ORDER BY m.rank);
    ELSE
      got_ids := ARRAY(SELECT m.chunk_id FROM scirag.mmr_select(
                         ARRAY(SELECT c.chunk_id FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o) ORDER BY c.o),
                         ARRAY(SELECT n - o + 1.0 FROM generate_series(1, n) AS o), k, mmr_lambda) m ORDER BY m.rank);
    END IF;
    ranked := ARRAY(SELECT c FROM unnest(ranked) AS c WHERE c.chunk_id = ANY (got_ids)
                    ORDER BY array_position(got_ids, c.chunk_id));
    stage := jsonb_build_object('stage', 'mmr', 'status', 'ok',
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', cardinality(ranked));
  EXCEPTION
    WHEN query_canceled THEN
      RAISE;
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
      stage := scirag.trace_error('mmr', e_state, e_msg, NULL, extract(epoch FROM clock_timestamp() - t0) * 1000)
               || jsonb_build_object('candidates', cardinality(ranked));
  END;
END $$;
COMMENT ON FUNCTION scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision) IS
  'MMR stage: k diverse chunks out of a longer candidate list (scirag.mmr_select; relevance = list position; mmr_lambda NULL = mmr_select''s own default), in MMR order. A failure (trace: error, sqlstate, message) leaves the list as it was; a cancel or statement timeout is raised. At most k candidates: no stage (stage NULL).';

CREATE OR REPLACE FUNCTION scirag.retrieve_rows(candidates scirag.ranked_hit[], k int)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT x.o::int, c.id, d.id, d.external_id, x.score, x.layers, d.title, c.section_path, c.content,
         c.is_table, scirag.citation(d, c)
  FROM unnest(candidates[1:k]) WITH ORDINALITY AS x(chunk_id, score, layers, o)
  JOIN scirag.chunks c ON c.id = x.chunk_id
  JOIN scirag.documents d ON d.id = c.document_id
  ORDER BY x.o;
END $$;
COMMENT ON FUNCTION scirag.retrieve_rows(scirag.ranked_hit[], int) IS
  'Formatting stage: the first k candidates as retrieve''s result rows (rank, document columns, content, citation), read through row-level security.';

CREATE OR REPLACE FUNCTION scirag.retrieve(
  query text,
  k int DEFAULT 10,
  profile text DEFAULT 'interactive',
  options jsonb DEFAULT '{}',
  query_embedding public.vector DEFAULT NULL)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  t_call timestamptz := clock_timestamp();
  cfg jsonb;
  hits scirag.layer_hit[];
  stages jsonb;
  stage jsonb;
  ranked scirag.ranked_hit[];
BEGIN
  PERFORM scirag.check_question(query, 'scirag.retrieve');
  cfg := scirag.retrieve_config(profile, k, options);   -- validated: every option within its bounds
  k := (cfg->>'k')::int;

  -- Fail closed: an empty scope returns nothing and calls no model.
  IF scirag.scope_is_empty() THEN
    PERFORM set_config('scirag.last_trace', jsonb_build_object(
      'profile', profile, 'k', k, 'scope', 'empty', 'ms', 0,
      'stages', (SELECT jsonb_agg(jsonb_build_object('stage', l, 'status', 'skipped', 'reason', 'empty scope', 'ms', 0, 'candidates', 0))
                 FROM jsonb_array_elements_text(cfg->'layers') AS l))::text, false);
    RETURN;
  END IF;

  SELECT r.hits, r.stages INTO hits, stages FROM scirag.retrieve_layers(query, cfg, query_embedding, t_call) r;
  SELECT f.ranked, f.stage INTO ranked, stage FROM scirag.retrieve_fuse(hits, cfg) f;
  stages := stages || stage;
  -- Optional post-fusion stages (off unless a preset or options turn them on). A stage
  -- that fails leaves the order as it was and says so in the trace.
  IF cfg ? 'rerank' THEN
    SELECT s.ranked, s.stage INTO ranked, stage FROM scirag.retrieve_rerank(query, ranked, cfg->'rerank') s;
    stages := stages || coalesce(stage, '[]');
  END IF;
  IF coalesce((cfg->>'mmr')::boolean, false) THEN
    SELECT s.ranked, s.stage INTO ranked, stage FROM scirag.retrieve_mmr(ranked, k, (cfg->>'mmr_lambda')::float8) s;
    stages := stages || coalesce(stage, '[]');
  END IF;

  RETURN QUERY SELECT * FROM scirag.retrieve_rows(ranked, k);
  PERFORM set_config('scirag.last_trace', jsonb_build_object(
    'profile', profile, 'k', k, 'preset', cfg->>'preset',
    'ms', round((extract(epoch FROM clock_timestamp() - t_call) * 1000)::numeric, 2),
    'stages', stages)::text, false);
END $$;
COMMENT ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector) IS
  'Hybrid retrieval in one call: retrieve_config (profile + preset + options, checked), retrieve_layers (the layers, inside the caller''s scope), retrieve_fuse (score fusion or weighted RRF, weights from the profile row), retrieve_rerank and retrieve_mmr when configured, retrieve_rows (ranked, cited chunks). Options (bounds in scirag.retrieve_option_schema(); the question is at most 4000 characters): layers, weights, budgets_ms (a layer over its budget contributes nothing), deadline_ms (after it, optional_layers not yet started are skipped), optional_layers, depth, depths (per layer), fusion (score or rrf), keyword_scale (max, minmax, or auto = minmax when the graph or community layer found anything, else max; score fusion), proximity (BM25 proximity weight, default the bm25_proximity setting), rrf_k, pool, rerank (scirag.rerank options), mmr, mmr_lambda, preset (a scirag.presets name). With query_embedding given no PL/Python runs. Trace: scirag.last_trace().';

REVOKE ALL ON FUNCTION scirag.retrieve_option_schema(), scirag.retrieve_config_check(jsonb), scirag.retrieve_config(text, int, jsonb),
  scirag.trace_error(text, text, text, text, double precision),
  scirag.retrieve_layers(text, jsonb, public.vector, timestamptz), scirag.retrieve_fuse(scirag.layer_hit[], jsonb),
  scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb), scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision),
  scirag.retrieve_rows(scirag.ranked_hit[], int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_option_schema(), scirag.retrieve_config_check(jsonb), scirag.retrieve_config(text, int, jsonb),
  scirag.trace_error(text, text, text, text, double precision),
  scirag.retrieve_layers(text, jsonb, public.vector, timestamptz), scirag.retrieve_fuse(scirag.layer_hit[], jsonb),
  scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb), scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision),
  scirag.retrieve_rows(scirag.ranked_hit[], int) TO scirag_reader, scirag_loader;
GRANT EXECUTE ON FUNCTION scirag.breadcrumb(text, text), scirag.citation(scirag.documents, scirag.chunks), scirag.last_trace(),
  scirag.retrieve(text, int, text, jsonb, public.vector) TO scirag_reader, scirag_loader;
-- CREATE OR REPLACE resets the wall's settings of API functions (functions/reader_wall_apply)
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
