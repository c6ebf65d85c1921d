-- Deploy scirag:functions/retrieve
-- Reworked (issue 13): profile + preset + options resolve into one validated
-- configuration in scirag.retrieve_config (every option typed and bounded, errors name
-- the option and its bounds), the question is capped at 4000 characters, and a
-- caller's rerank.model_path is refused (the model folder is an admin setting).
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
  'Trace of the last scirag.retrieve call in this session: per stage its status (ok, empty, error, timeout, skipped, disabled), duration and candidate count. Content-free: never query or chunk text.';

CREATE OR REPLACE FUNCTION scirag.retrieve_option_schema()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Every option retrieve understands, with its type and bounds (issue 13: nothing a
  -- reader sends is unbounded). "map" options are objects whose values have the type
  -- given by "of"; "layers" lists are arrays of layer names.
  SELECT '{
    "k":             {"type": "integer", "min": 1, "max": 1000},
    "layers":        {"type": "layers"},
    "_fail_layers":  {"type": "layers"},
    "weights":       {"type": "map", "keys": ["vector", "keyword", "graph", "community", "hyde"],
                      "of": {"type": "number", "min": 0, "max": 100}},
    "budgets_ms":    {"type": "map", "keys": ["embed", "vector", "keyword", "graph", "community", "hyde"],
                      "of": {"type": "number", "min": 0, "max": 600000}},
    "depth":         {"type": "integer", "min": 1, "max": 1000},
    "depths":        {"type": "map", "keys": ["vector", "keyword"], "of": {"type": "integer", "min": 0, "max": 1000}},
    "fusion":        {"type": "enum", "values": ["rrf", "score"]},
    "keyword_scale": {"type": "enum", "values": ["max", "minmax", "auto"]},
    "proximity":     {"type": "number", "min": 0, "max": 100},
    "rrf_k":         {"type": "integer", "min": 1, "max": 10000},
    "pool":          {"type": "integer", "min": 1, "max": 1000},
    "rerank":        {"type": "record", "fields": {
                        "reranker":      {"type": "enum", "values": ["none", "llm", "cross_encoder"]},
                        "entity_boost":  {"type": "number", "min": 0, "max": 1},
                        "entities":      {"type": "strings", "max": 32},
                        "intent_bias":   {"type": "boolean"},
                        "intent":        {"type": "string"},
                        "intent_weight": {"type": "number", "min": 0, "max": 1},
                        "batch_size":    {"type": "integer", "min": 1, "max": 1024},
                        "max_length":    {"type": "integer", "min": 1, "max": 8192}}},
    "mmr":           {"type": "boolean"},
    "mmr_lambda":    {"type": "number", "min": 0, "max": 1},
    "preset":        {"type": "string"}
  }'::jsonb
$$;
COMMENT ON FUNCTION scirag.retrieve_option_schema() IS
  'The options scirag.retrieve accepts (and the keys a retrieval profile may hold): type and bounds of each. Questions are at most 4000 characters.';

CREATE OR REPLACE FUNCTION scirag.retrieve_config(profile text, k int DEFAULT 10, options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  sch jsonb := scirag.retrieve_option_schema();
  layer_names jsonb := '["vector", "keyword", "graph", "community", "hyde"]';
  opts jsonb := coalesce(options, '{}');
  cfg jsonb;
  pre jsonb;
  kv record;
  sub record;
  spec jsonb;
  t text;
  v jsonb;
  num numeric;
  name text;
  checks jsonb := '[]';
  c jsonb;
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
                                   'k', k);
  -- A preset (VulcanLab-style, scirag.presets) sets the candidate depths, RRF k, the
  -- pool the later stages choose from, the number of results and those stages. Its
  -- reranker_model_path is not used: the model folder is an admin setting.
  IF opts ? 'preset' THEN
    pre := scirag.preset_get(opts->>'preset')->'retrieval';
    cfg := cfg || jsonb_strip_nulls(jsonb_build_object(
      'preset', opts->>'preset',
      'depths', jsonb_build_object('vector', pre->'dense_limit', 'keyword', pre->'lexical_limit'),
      'rrf_k', pre->'rrf_k', 'pool', pre->'top_k_rrf',
      'mmr', coalesce(pre->'mmr_enabled', 'false'), 'mmr_lambda', pre->'mmr_lambda',
      'k', pre->'top_n_final'));
    IF pre->>'reranker' <> 'none' OR coalesce((pre->>'intent_bias_enabled')::boolean, false)
       OR coalesce((pre->>'entity_boost')::float8, 0) > 0 THEN
      cfg := cfg || jsonb_build_object('rerank', jsonb_strip_nulls(jsonb_build_object(
        'reranker', pre->'reranker',
        'entity_boost', pre->'entity_boost', 'intent_bias', pre->'intent_bias_enabled',
        'intent_weight', pre->'intent_weight', 'batch_size', pre->'reranker_batch_size',
        'max_length', pre->'reranker_max_length')));
    END IF;
    -- explicit options still win (the maps were merged key by key above)
    cfg := cfg || (opts - 'preset' - 'weights' - 'budgets_ms');
  END IF;
  IF cfg->'k' = 'null' OR NOT cfg ? 'k' THEN
    RAISE EXCEPTION 'scirag.retrieve: k must not be null' USING ERRCODE = '22023';
  END IF;

  -- Every key of the resolved configuration, whatever set it (profile, preset, option).
  FOR kv IN SELECT * FROM jsonb_each(cfg) LOOP
    spec := sch->kv.key;
    CONTINUE WHEN spec IS NULL;   -- a profile's own bookkeeping keys (none today) pass through
    IF spec->>'type' = 'record' THEN
      IF jsonb_typeof(kv.value) <> 'object' THEN
        RAISE EXCEPTION 'scirag.retrieve: option "%" must be a JSON object (got %)', kv.key, jsonb_typeof(kv.value)
          USING ERRCODE = '22023';
      END IF;
      FOR sub IN SELECT * FROM jsonb_each(kv.value) LOOP
        IF NOT (spec->'fields') ? sub.key THEN
          RAISE EXCEPTION 'scirag.retrieve: unknown key "%" in option "%"', left(sub.key, 100), kv.key
            USING ERRCODE = '22023', HINT = 'keys of ' || kv.key || ': ' || (SELECT string_agg(x, ', ' ORDER BY x) FROM jsonb_object_keys(spec->'fields') AS x);
        END IF;
        checks := checks || jsonb_build_array(jsonb_build_object('name', kv.key || '.' || sub.key, 'spec', spec->'fields'->sub.key, 'value', sub.value));
      END LOOP;
    ELSIF spec->>'type' = 'map' THEN
      IF jsonb_typeof(kv.value) <> 'object' THEN
        RAISE EXCEPTION 'scirag.retrieve: option "%" must be a JSON object (got %)', kv.key, jsonb_typeof(kv.value)
          USING ERRCODE = '22023';
      END IF;
      FOR sub IN SELECT * FROM jsonb_each(kv.value) LOOP
        IF NOT (spec->'keys') ? sub.key THEN
          RAISE EXCEPTION 'scirag.retrieve: unknown key "%" in option "%"', left(sub.key, 100), kv.key
            USING ERRCODE = '22023', HINT = 'keys of ' || kv.key || ': ' || (SELECT string_agg(x, ', ') FROM jsonb_array_elements_text(spec->'keys') AS x);
        END IF;
        checks := checks || jsonb_build_array(jsonb_build_object('name', kv.key || '.' || sub.key, 'spec', spec->'of', 'value', sub.value));
      END LOOP;
    ELSE
      checks := checks || jsonb_build_array(jsonb_build_object('name', kv.key, 'spec', spec, 'value', kv.value));
    END IF;
  END LOOP;
  FOR c IN SELECT * FROM jsonb_array_elements(checks) LOOP
    name := c->>'name';
    spec := c->'spec';
    v := c->'value';
    t := jsonb_typeof(v);
    IF spec->>'type' IN ('integer', 'number') THEN
      IF t <> 'number' THEN
        RAISE EXCEPTION 'scirag.retrieve: option "%" must be % between % and % (got %)', name,
          CASE spec->>'type' WHEN 'integer' THEN 'an integer' ELSE 'a number' END, spec->>'min', spec->>'max', t
          USING ERRCODE = '22023';
      END IF;
      num := v::text::numeric;
      IF (spec->>'type' = 'integer' AND num <> trunc(num))
         OR num < (spec->>'min')::numeric OR num > (spec->>'max')::numeric THEN
        RAISE EXCEPTION 'scirag.retrieve: option "%" must be % between % and % (got %)', name,
          CASE spec->>'type' WHEN 'integer' THEN 'an integer' ELSE 'a number' END, spec->>'min', spec->>'max', left(num::text, 40)
          USING ERRCODE = '22023';
      END IF;
    ELSIF spec->>'type' = 'boolean' AND t <> 'boolean' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be true or false (got %)', name, t USING ERRCODE = '22023';
    ELSIF spec->>'type' IN ('string', 'enum') AND t <> 'string' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be a string (got %)', name, t USING ERRCODE = '22023';
    ELSIF spec->>'type' = 'enum' AND NOT (spec->'values') ? (v #>> '{}') THEN
      RAISE EXCEPTION 'scirag.retrieve: unknown % "%"', name, left(v #>> '{}', 100)
        USING ERRCODE = '22023', HINT = name || ' is ' || (SELECT string_agg(x, ' or ') FROM jsonb_array_elements_text(spec->'values') AS x);
    ELSIF spec->>'type' = 'strings' AND (t <> 'array' OR jsonb_array_length(v) > (spec->>'max')::int
                                         OR jsonb_path_exists(v, '$[*] ? (@.type() != "string")')) THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be an array of at most % strings', name, spec->>'max'
        USING ERRCODE = '22023';
    ELSIF spec->>'type' = 'layers' THEN
      IF t <> 'array' THEN
        RAISE EXCEPTION 'scirag.retrieve: option "%" must be an array of layer names (got %)', name, t
          USING ERRCODE = '22023', HINT = 'layers are vector, keyword, graph, community, hyde';
      END IF;
      SELECT x INTO v FROM jsonb_array_elements(cfg->name) AS x WHERE NOT layer_names @> jsonb_build_array(x) LIMIT 1;
      IF v IS NOT NULL THEN
        RAISE EXCEPTION 'scirag.retrieve: unknown layer % in options.%', left(v::text, 100), name
          USING ERRCODE = '22023', HINT = 'layers are vector, keyword, graph, community, hyde';
      END IF;
    END IF;
  END LOOP;
  RETURN cfg;
END $$;
COMMENT ON FUNCTION scirag.retrieve_config(text, int, jsonb) IS
  'The one place where a retrieval profile, a preset (options.preset) and per-call options become one configuration: profile, then preset, then explicit options; weights and budgets_ms merge key by key; k is the result count (a preset''s top_n_final replaces it). Every key is checked against retrieve_option_schema() and an error names the option and its bounds (SQLSTATE 22023). A caller''s rerank.model_path is refused (the model folder is an admin setting).';

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
  cfg jsonb;
  known text[] := ARRAY['vector', 'keyword', 'graph', 'community', 'hyde'];
  wanted text[];
  layer text;
  fail_layers text[];
  depth int;
  fusion text;
  kw_scale text;        -- BM25 scaling for score fusion, 'auto' resolved
  budget double precision;
  qvec public.vector := query_embedding;
  embed_status text;
  hits scirag.layer_hit[] := '{}';
  got scirag.layer_hit[];
  status text;
  t0 timestamptz;
  f_ids bigint[];
  f_scores double precision[];
  f_layers jsonb[];
  got_ids bigint[];
  t_call timestamptz := clock_timestamp();
  ms double precision;
  stages jsonb := '[]';
BEGIN
  -- Bounded before anything else runs (issue 13): the question reaches Python text routines.
  IF length(query) > 4000 THEN
    RAISE EXCEPTION 'scirag.retrieve: the question is % characters long, at most 4000 allowed', length(query)
      USING ERRCODE = '22023';
  END IF;
  cfg := scirag.retrieve_config(profile, k, options);   -- validated: every option within its bounds
  k := (cfg->>'k')::int;
  wanted := ARRAY(SELECT jsonb_array_elements_text(cfg->'layers'));
  -- "_fail_layers" forces a layer to error: a drill for degradation tests and demos
  fail_layers := ARRAY(SELECT jsonb_array_elements_text(coalesce(cfg->'_fail_layers', '[]')));
  depth := greatest(coalesce((cfg->>'depth')::int, 100), coalesce(k, 10));
  fusion := coalesce(cfg->>'fusion', 'rrf');

  -- Fail closed: an empty scope returns nothing and calls no model.
  IF scirag.scope_is_empty() THEN
    PERFORM set_config('scirag.last_trace', jsonb_build_object(
      'profile', profile, 'k', k, 'scope', 'empty', 'ms', 0,
      'stages', (SELECT jsonb_agg(jsonb_build_object('stage', l, 'status', 'skipped', 'ms', 0, 'candidates', 0))
                 FROM unnest(wanted) AS l))::text, false);
    RETURN;
  END IF;

  -- One query embedding per call, shared by every layer that needs it.
  IF qvec IS NULL AND wanted && ARRAY['vector', 'community'] THEN
    t0 := clock_timestamp();
    BEGIN
      qvec := scirag.embed_query(query);
      embed_status := 'ok';
    EXCEPTION WHEN OTHERS THEN
      embed_status := 'error';
    END;
    stages := stages || jsonb_build_object('stage', 'embed', 'status', embed_status,
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', 0);
  END IF;

  FOREACH layer IN ARRAY known LOOP
    t0 := clock_timestamp();
    got := '{}';
    IF NOT layer = ANY (wanted) THEN
      CONTINUE;
    END IF;
    BEGIN
      IF layer = ANY (fail_layers) THEN
        RAISE EXCEPTION 'forced failure of layer %', layer USING ERRCODE = 'P0001';
      END IF;
      IF layer = 'vector' THEN
        IF qvec IS NULL THEN
          status := 'skipped';  -- no query embedding could be had
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
        ELSE
          EXECUTE 'SELECT coalesce(array_agg(ROW(''community'', m.chunk_id, m.rank, NULL)::scirag.layer_hit), ''{}'')
                   FROM scirag.search_community_chunks($1, $2) m' INTO got USING qvec, depth;
        END IF;
      END IF;
    EXCEPTION
      WHEN undefined_function THEN
        status := 'skipped';  -- layer not installed in this deployment
        got := '{}';
      WHEN OTHERS THEN
        status := 'error';
        got := '{}';
    END;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    budget := coalesce((cfg->'budgets_ms'->>layer)::float8, 'infinity');
    IF status IS NULL THEN
      IF ms > budget THEN
        status := 'timeout';   -- over budget: contributes nothing
        got := '{}';
      ELSIF cardinality(got) = 0 THEN
        status := 'empty';
      ELSE
        status := 'ok';
      END IF;
    END IF;
    hits := hits || got;
    stages := stages || jsonb_build_object('stage', layer, 'status', status,
      'ms', round(ms::numeric, 2), 'candidates', cardinality(got));
    status := NULL;
  END LOOP;
  FOREACH layer IN ARRAY known LOOP
    IF NOT layer = ANY (wanted) THEN
      stages := stages || jsonb_build_object('stage', layer, 'status', 'disabled', 'ms', 0, 'candidates', 0);
    END IF;
  END LOOP;

  -- BM25 scaling for score fusion. 'auto' is min-max when the graph or community layer
  -- found anything (their hits must be able to outrank the keyword tail: the demo's
  -- multi-hop answer ranks 9th with min-max, 12th with max) and max otherwise, where
  -- max is what measured best (SciFact, SciTab): deep then ranks exactly as interactive.
  kw_scale := coalesce(cfg->>'keyword_scale', 'max');
  IF kw_scale = 'auto' THEN
    kw_scale := CASE WHEN EXISTS (SELECT 1 FROM unnest(hits) h WHERE h.layer IN ('graph', 'community'))
                          THEN 'minmax' ELSE 'max' END;
  END IF;

  -- Fuse once into a candidate pool (k, or a preset's top_k_rrf when later stages choose from it).
  t0 := clock_timestamp();
  SELECT coalesce(array_agg(fr.chunk_id ORDER BY fr.score DESC, fr.chunk_id), '{}'),
         coalesce(array_agg(fr.score ORDER BY fr.score DESC, fr.chunk_id), '{}'),
         coalesce(array_agg(fr.layers ORDER BY fr.score DESC, fr.chunk_id), '{}')
    INTO f_ids, f_scores, f_layers
  FROM (SELECT * FROM (SELECT * FROM scirag.fuse_rrf(hits, cfg->'weights', coalesce((cfg->>'rrf_k')::int, 60))
                       WHERE fusion = 'rrf'
                       UNION ALL
                       SELECT * FROM scirag.fuse_scores(hits, cfg->'weights', kw_scale)
                       WHERE fusion = 'score') u
        ORDER BY u.score DESC, u.chunk_id
        LIMIT greatest(k, coalesce((cfg->>'pool')::int, k))) fr;
  stages := stages || jsonb_build_object('stage', 'fuse', 'status', 'ok', 'method', fusion,
    'keyword_scale', CASE WHEN fusion = 'score' THEN kw_scale END,
    'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2),
    'candidates', (SELECT count(DISTINCT h.chunk_id) FROM unnest(hits) h));

  -- Optional post-fusion stages (off unless a preset or options turn them on). A stage
  -- that fails leaves the fused order as it was and says so in the trace.
  IF cfg ? 'rerank' AND cardinality(f_ids) > 0 THEN
    t0 := clock_timestamp();
    BEGIN
      SELECT array_agg(r.chunk_id ORDER BY r.score DESC, r.chunk_id), min(r.status)
        INTO got_ids, status
      FROM scirag.rerank(query, f_ids,
                         ARRAY(SELECT c.content FROM unnest(f_ids) WITH ORDINALITY AS x(id, o)
                               JOIN scirag.chunks c ON c.id = x.id ORDER BY x.o),
                         (cfg->'rerank') || jsonb_build_object('fused_scores', to_jsonb(f_scores))) r;
      IF got_ids IS NOT NULL AND cardinality(got_ids) = cardinality(f_ids) THEN
        SELECT array_agg(x.s ORDER BY array_position(got_ids, x.id)), array_agg(x.l ORDER BY array_position(got_ids, x.id))
          INTO f_scores, f_layers FROM unnest(f_ids, f_scores, f_layers) AS x(id, s, l);
        f_ids := got_ids;
      END IF;
    EXCEPTION WHEN OTHERS THEN
      status := 'error';
    END;
    stages := stages || jsonb_build_object('stage', 'rerank', 'status', coalesce(status, 'empty'),
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', cardinality(f_ids));
    status := NULL;
  END IF;
  IF coalesce((cfg->>'mmr')::boolean, false) AND cardinality(f_ids) > k THEN
    t0 := clock_timestamp();
    BEGIN
      got_ids := ARRAY(SELECT m.chunk_id FROM scirag.mmr_select(f_ids,
                         ARRAY(SELECT cardinality(f_ids) - o + 1.0 FROM generate_series(1, cardinality(f_ids)) AS o),
                         k, coalesce((cfg->>'mmr_lambda')::float8, 0.7)) m ORDER BY m.rank);
      SELECT array_agg(x.s ORDER BY array_position(got_ids, x.id)), array_agg(x.l ORDER BY array_position(got_ids, x.id))
        INTO f_scores, f_layers FROM unnest(f_ids, f_scores, f_layers) AS x(id, s, l) WHERE x.id = ANY (got_ids);
      f_ids := got_ids;
      status := 'ok';
    EXCEPTION WHEN OTHERS THEN
      status := 'error';
    END;
    stages := stages || jsonb_build_object('stage', 'mmr', 'status', status,
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', cardinality(f_ids));
    status := NULL;
  END IF;

  RETURN QUERY
  SELECT x.o::int, c.id, d.id, d.external_id, x.s, x.l, d.title, c.section_path, c.content,
         c.is_table, scirag.citation(d, c)
  FROM unnest(f_ids[1:k], f_scores[1:k], f_layers[1:k]) WITH ORDINALITY AS x(id, s, l, o)
  JOIN scirag.chunks c ON c.id = x.id
  JOIN scirag.documents d ON d.id = c.document_id
  ORDER BY x.o;
  PERFORM set_config('scirag.last_trace', jsonb_build_object(
    'profile', profile, 'k', k, 'preset', cfg->>'preset',
    'ms', round((extract(epoch FROM clock_timestamp() - t_call) * 1000)::numeric, 2),
    'stages', stages)::text, false);
END $$;
COMMENT ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector) IS
  'Hybrid retrieval in one call: runs the profile''s layers inside the caller''s scope, fuses them (score fusion or weighted RRF, per profile) and returns ranked, cited chunks. Options are resolved and checked by scirag.retrieve_config (bounds in scirag.retrieve_option_schema(); the question is at most 4000 characters): layers, weights, budgets_ms, depth, depths (per layer), fusion (score or rrf), keyword_scale (max, minmax, or auto = minmax when the graph or community layer found anything, else max; score fusion), proximity (BM25 proximity weight, default the bm25_proximity setting), rrf_k, pool, rerank (scirag.rerank options), mmr, mmr_lambda, preset (a scirag.presets name). With query_embedding given no PL/Python runs. Trace: scirag.last_trace().';
REVOKE ALL ON FUNCTION scirag.retrieve_option_schema(), scirag.retrieve_config(text, int, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_option_schema(), scirag.retrieve_config(text, int, jsonb) TO scirag_reader, scirag_loader;
GRANT EXECUTE ON FUNCTION scirag.breadcrumb(text, text), scirag.citation(scirag.documents, scirag.chunks), scirag.last_trace(),
  scirag.retrieve(text, int, text, jsonb, public.vector) TO scirag_reader, scirag_loader;
COMMIT;
