-- Deploy scirag:functions/retrieve_layers
-- Split (issue 28): scirag.retrieve_layers, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_layers` (docs/releasing.md, "One object per change").
BEGIN;

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

REVOKE ALL ON FUNCTION scirag.retrieve_layers(text, jsonb, public.vector, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_layers(text, jsonb, public.vector, timestamptz) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
