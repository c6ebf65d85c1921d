-- Deploy scirag:functions/retrieve_resolved
-- The preset resolved once per answer (issue 28): scirag.retrieve with a sixth argument,
-- the preset as scirag.preset_resolve gave it (scirag.retrieve_config uses it when it is
-- the preset the options name). scirag.answer resolves the preset for its own options
-- and hands it down through scirag.retrieve_evidence, so it is no longer resolved a
-- second time inside retrieve. The API signature (five arguments) checks the question
-- and runs this one with no preset given: its rows, trace and errors are unchanged.
-- Its revert re-creates the version of functions/retrieve_main and drops this one.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve(
  query text,
  k int,
  profile text,
  options jsonb,
  query_embedding public.vector,
  preset jsonb)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb)
LANGUAGE plpgsql
SECURITY DEFINER
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
  -- The question's length is checked by the callers (scirag.retrieve's API signature
  -- below, scirag.answer) before this runs, and bounded again by retrieve_layers.
  cfg := scirag.retrieve_config(profile, k, options, preset);   -- validated: every option within its bounds
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
COMMENT ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) IS
  'scirag.retrieve(query, k, profile, options, query_embedding) with the preset already resolved (a scirag.preset_resolve result, or NULL; see scirag.retrieve_config(text, int, jsonb, jsonb)). It does not check the question''s length itself: its callers do (the five-argument scirag.retrieve, scirag.answer), and retrieve_layers bounds it again. Internal: scirag.retrieve_evidence calls it for scirag.answer; readers call the five-argument function.';

CREATE OR REPLACE FUNCTION scirag.retrieve(
  query text,
  k int DEFAULT 10,
  profile text DEFAULT 'interactive',
  options jsonb DEFAULT '{}',
  query_embedding public.vector DEFAULT NULL)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM scirag.check_question(query, 'scirag.retrieve');
  RETURN QUERY SELECT * FROM scirag.retrieve(query, k, profile, options, query_embedding, NULL::jsonb);
END $$;
COMMENT ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector) IS
  'Hybrid retrieval in one call: retrieve_config (profile + preset + options, checked), retrieve_layers (the layers, inside the caller''s scope), retrieve_fuse (score fusion or weighted RRF, weights from the profile row), retrieve_rerank and retrieve_mmr when configured, retrieve_rows (ranked, cited chunks). Options (bounds in scirag.retrieve_option_schema(); the question is at most 4000 characters): layers, weights, budgets_ms (a layer over its budget contributes nothing), deadline_ms (after it, optional_layers not yet started are skipped), optional_layers, depth, depths (per layer), fusion (score or rrf), keyword_scale (max, minmax, or auto = minmax when the graph or community layer found anything, else max; score fusion), proximity (BM25 proximity weight, default the bm25_proximity setting), rrf_k, pool, rerank (scirag.rerank options), mmr, mmr_lambda, preset (a scirag.presets name). With query_embedding given no PL/Python runs. Trace: scirag.last_trace().';


-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read. The six-argument
-- function is not for readers (they cannot hand in a resolved preset).
ALTER FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) TO scirag_loader;
ALTER FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector) TO scirag_reader, scirag_loader;
COMMIT;
