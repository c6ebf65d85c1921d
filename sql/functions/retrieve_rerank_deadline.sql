-- Deploy scirag:functions/retrieve_rerank_deadline
-- The rerank stage under the deadline (issue 29): the six-argument scirag.retrieve
-- (functions/retrieve_resolved) hands the rerank stage what its deadline_ms leaves, as
-- the rerank option deadline_ms. The model scores batch by batch and does not start a
-- batch that would end past it; what is left unscored keeps its fused order below the
-- scored ones, and the trace says how many were scored. Nothing else changes.
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
    -- The model gets what the deadline leaves (it stops before a batch that would end
    -- past it; the rest keeps its fused order). Without a deadline it scores the pool.
    SELECT s.ranked, s.stage INTO ranked, stage FROM scirag.retrieve_rerank(query, ranked,
      CASE WHEN cfg ? 'deadline_ms' THEN cfg->'rerank' || jsonb_build_object('deadline_ms',
        round(greatest(0, (cfg->>'deadline_ms')::float8 - extract(epoch FROM clock_timestamp() - t_call) * 1000)::numeric, 1))
      ELSE cfg->'rerank' END) s;
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
  'scirag.retrieve(query, k, profile, options, query_embedding) with the preset already resolved (a scirag.preset_resolve result, or NULL; see scirag.retrieve_config(text, int, jsonb, jsonb)). It does not check the question''s length itself: its callers do (the five-argument scirag.retrieve, scirag.answer), and retrieve_layers bounds it again. The rerank stage gets what deadline_ms leaves of its time (rerank option deadline_ms). Internal: scirag.retrieve_evidence calls it for scirag.answer; readers call the five-argument function.';

COMMENT ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) IS
  'Reorders candidate chunks (contents as the caller shows them, e.g. enriched). options: reranker none|llm|cross_encoder (its folder with model.onnx + tokenizer.json is the admin setting scirag.settings reranker_model_path; a model_path option is refused), batch_size (8, 1..1024), max_length (512, 1..8192), entity_boost (+0.05 per query entity found, 0..1), entities (default: taken from the query; at most 32), intent_bias (false), intent (default: scirag.classify_intent; one of CRITIQUE, COMPARISON, DEFINITION, QUANTITY, MECHANISM, APPLICATION, STUDY_DETAIL, GENERAL), intent_weight (0.05), fused_scores (base scores when no model runs), deadline_ms (0..600000: time for the model, its loading included; a batch that would end past it is not started, the unscored rest keeps its fused order below the scored ones; scirag.retrieve passes what its deadline leaves). Bounds: query <= 4000 characters, <= 1000 candidates, each <= 100000 characters (else an error naming the bound); an LLM reranker scores the first 50 candidates, the rest keep their fused order below them (before boosts). status: ok, "partial: deadline, <m> of <n> scored", disabled (no model; boosts only), or "fallback: <reason>" with the input order (reason deadline: nothing scored in time). Ids the caller cannot read are dropped; an empty scope returns nothing before any model call.';

-- Declared where defined (owner, grants), as functions/retrieve_resolved does: not for
-- readers, who cannot hand in a resolved preset.
ALTER FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb) TO scirag_loader;
COMMIT;
