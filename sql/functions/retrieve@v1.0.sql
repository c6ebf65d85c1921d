-- Deploy scirag:functions/retrieve
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
    'section_path', scirag.breadcrumb(d.title, c.section_path),
    'pages', CASE WHEN c.page_start IS NOT NULL THEN
               CASE WHEN c.page_end IS DISTINCT FROM c.page_start THEN c.page_start || '-' || c.page_end
                    ELSE c.page_start::text END END,
    'lines', CASE WHEN c.line_start IS NOT NULL THEN c.line_start || '-' || coalesce(c.line_end, c.line_start) END,
    'cite', concat_ws(', ',
              CASE WHEN cardinality(d.authors) > 2 THEN d.authors[1] || ' et al.'
                   ELSE array_to_string(d.authors, ' & ') END || CASE WHEN d.year IS NOT NULL THEN ' (' || d.year || ')' END,
              d.title,
              scirag.breadcrumb(d.title, c.section_path),
              CASE WHEN c.page_start IS NOT NULL THEN 'p. ' || c.page_start
                   WHEN c.line_start IS NOT NULL THEN 'lines ' || c.line_start || '-' || coalesce(c.line_end, c.line_start) END,
              CASE WHEN d.doi IS NOT NULL THEN 'doi:' || d.doi END)))
$$;
COMMENT ON FUNCTION scirag.citation(scirag.documents, scirag.chunks) IS
  'Citation of a chunk: document identity, section path, page or line span, and a human-readable "cite" string.';

CREATE OR REPLACE FUNCTION scirag.last_trace()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT nullif(current_setting('scirag.last_trace', true), '')::jsonb $$;
COMMENT ON FUNCTION scirag.last_trace() IS
  'Trace of the last scirag.retrieve call in this session: per stage its status (ok, empty, error, timeout, skipped, disabled), duration and candidate count. Content-free: never query or chunk text.';

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
  budget double precision;
  qvec public.vector := query_embedding;
  embed_status text;
  hits scirag.layer_hit[] := '{}';
  got scirag.layer_hit[];
  status text;
  t0 timestamptz;
  pre jsonb;
  f_ids bigint[];
  f_scores double precision[];
  f_layers jsonb[];
  got_ids bigint[];
  t_call timestamptz := clock_timestamp();
  ms double precision;
  stages jsonb := '[]';
  bad text;
BEGIN
  SELECT p.config INTO cfg FROM scirag.retrieval_profiles p WHERE p.name = profile;
  IF cfg IS NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown profile "%"', profile
      USING HINT = 'SELECT name FROM scirag.retrieval_profiles';
  END IF;
  IF jsonb_typeof(coalesce(options, '{}')) <> 'object' THEN
    RAISE EXCEPTION 'scirag.retrieve: options must be a JSON object';
  END IF;
  -- per-call options override the profile; weights and budgets merge key by key
  cfg := cfg || (coalesce(options, '{}') - 'weights' - 'budgets_ms')
             || jsonb_build_object('weights', coalesce(cfg->'weights', '{}') || coalesce(options->'weights', '{}'),
                                   'budgets_ms', coalesce(cfg->'budgets_ms', '{}') || coalesce(options->'budgets_ms', '{}'));
  -- A preset (VulcanLab-style, scirag.presets) sets the candidate depths, RRF k, the
  -- pool the later stages choose from, the number of results and those stages.
  IF options ? 'preset' THEN
    pre := scirag.preset_get(options->>'preset')->'retrieval';
    cfg := cfg || jsonb_build_object(
      'preset', options->>'preset',
      'depths', jsonb_build_object('vector', pre->'dense_limit', 'keyword', pre->'lexical_limit'),
      'rrf_k', pre->'rrf_k', 'pool', pre->'top_k_rrf',
      'mmr', coalesce(pre->'mmr_enabled', 'false'), 'mmr_lambda', pre->'mmr_lambda');
    IF pre->>'reranker' <> 'none' OR coalesce((pre->>'intent_bias_enabled')::boolean, false)
       OR coalesce((pre->>'entity_boost')::float8, 0) > 0 THEN
      cfg := cfg || jsonb_build_object('rerank', jsonb_strip_nulls(jsonb_build_object(
        'reranker', pre->'reranker', 'model_path', pre->'reranker_model_path',
        'entity_boost', pre->'entity_boost', 'intent_bias', pre->'intent_bias_enabled',
        'intent_weight', pre->'intent_weight', 'batch_size', pre->'reranker_batch_size',
        'max_length', pre->'reranker_max_length')));
    END IF;
    k := coalesce((pre->>'top_n_final')::int, k);
    cfg := cfg || (coalesce(options, '{}') - 'preset');   -- explicit options still win
  END IF;
  wanted := ARRAY(SELECT jsonb_array_elements_text(cfg->'layers'));
  SELECT x INTO bad FROM unnest(wanted) AS x WHERE x <> ALL (known) LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown layer "%" in options.layers', bad
      USING HINT = 'layers are vector, keyword, graph, community, hyde';
  END IF;
  -- "_fail_layers" forces a layer to error: a drill for degradation tests and demos
  fail_layers := ARRAY(SELECT jsonb_array_elements_text(coalesce(cfg->'_fail_layers', '[]')));
  depth := greatest(coalesce((cfg->>'depth')::int, 100), coalesce(k, 10));
  fusion := coalesce(cfg->>'fusion', 'rrf');
  IF fusion NOT IN ('rrf', 'score') THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown fusion "%"', fusion USING HINT = 'fusion is rrf or score';
  END IF;
  IF coalesce(cfg->>'keyword_scale', 'max') NOT IN ('max', 'minmax') THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown keyword_scale "%"', cfg->>'keyword_scale'
      USING HINT = 'keyword_scale is max or minmax';
  END IF;
  IF cfg ? 'proximity' AND NOT jsonb_path_exists(cfg, '$.proximity ? (@.type() == "number" && @ >= 0)') THEN
    RAISE EXCEPTION 'scirag.retrieve: options.proximity must be a number >= 0, not %', cfg->'proximity';
  END IF;

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

  -- Fuse once into a candidate pool (k, or a preset's top_k_rrf when later stages choose from it).
  t0 := clock_timestamp();
  SELECT coalesce(array_agg(fr.chunk_id ORDER BY fr.score DESC, fr.chunk_id), '{}'),
         coalesce(array_agg(fr.score ORDER BY fr.score DESC, fr.chunk_id), '{}'),
         coalesce(array_agg(fr.layers ORDER BY fr.score DESC, fr.chunk_id), '{}')
    INTO f_ids, f_scores, f_layers
  FROM (SELECT * FROM (SELECT * FROM scirag.fuse_rrf(hits, cfg->'weights', coalesce((cfg->>'rrf_k')::int, 60))
                       WHERE fusion = 'rrf'
                       UNION ALL
                       SELECT * FROM scirag.fuse_scores(hits, cfg->'weights', coalesce(cfg->>'keyword_scale', 'max'))
                       WHERE fusion = 'score') u
        ORDER BY u.score DESC, u.chunk_id
        LIMIT greatest(k, coalesce((cfg->>'pool')::int, k))) fr;
  stages := stages || jsonb_build_object('stage', 'fuse', 'status', 'ok', 'method', fusion,
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
  'Hybrid retrieval in one call: runs the profile''s layers inside the caller''s scope, fuses them (score fusion or weighted RRF, per profile) and returns ranked, cited chunks. options: layers, weights, budgets_ms, depth, depths (per layer), fusion (score or rrf), keyword_scale (max or minmax, score fusion), proximity (BM25 proximity weight, default the bm25_proximity setting), rrf_k, pool, rerank (scirag.rerank options), mmr, mmr_lambda, preset (a scirag.presets name). With query_embedding given no PL/Python runs. Trace: scirag.last_trace().';
GRANT EXECUTE ON FUNCTION scirag.breadcrumb(text, text), scirag.citation(scirag.documents, scirag.chunks), scirag.last_trace(),
  scirag.retrieve(text, int, text, jsonb, public.vector) TO scirag_reader, scirag_loader;
COMMIT;
