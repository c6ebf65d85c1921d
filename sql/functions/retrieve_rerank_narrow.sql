-- Deploy scirag:functions/retrieve_rerank_narrow
-- The rerank option narrow_only (issue 23): the stage reranks only when the positive
-- scope filters make the scope narrow (scirag.scope_narrow_documents(): at most 1,000
-- admitted chunks, e.g. one paper asked with scirag.documents); otherwise it leaves the
-- fused order and adds no stage to the trace, as if rerank were off. The interactive
-- profile turns it on (schema/interactive_rerank_narrow): asking one paper, the layers'
-- short road (functions/scope_narrow) saves about what scoring its paragraphs costs.
-- narrow_only is retrieve's option, not the stage's: it is taken out before
-- scirag.rerank sees the options. Otherwise unchanged from retrieve_rerank.sql (change
-- functions/retrieve_rerank); its revert re-creates that version. scirag.rerank's
-- comment (last set by functions/retrieve_rerank_deadline) gains its new option,
-- paragraphs (functions/retrieve_option_schema_narrow).
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_rerank(query text, candidates scirag.ranked_hit[], options jsonb,
                                                  OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SECURITY DEFINER
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
  IF coalesce((options->>'narrow_only')::boolean, false) AND scirag.scope_narrow_documents() IS NULL THEN
    RETURN;   -- a wide scope: no stage, the fused order stands
  END IF;
  options := options - 'narrow_only';
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
  'Rerank stage: reorders a candidate list with scirag.rerank (options: retrieve''s rerank option), the fused scores passed along; with narrow_only, only when the positive scope filters admit at most 1,000 chunks (scirag.scope_narrow_documents()), else no stage; chunk text read through row-level security. A reranker that fails (trace: error, its sqlstate and message) or returns another set leaves the order as it was; a cancel or statement timeout is raised. Empty input: no stage (stage NULL).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) TO scirag_reader, scirag_loader;
-- scirag.rerank's own option paragraphs (scirag_helpers/rerank.py), in its comment
COMMENT ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) IS
  'Reorders candidate chunks (contents as the caller shows them, e.g. enriched). options: reranker none|llm|cross_encoder (its folder with model.onnx + tokenizer.json is the admin setting scirag.settings reranker_model_path; a model_path option is refused), batch_size (8, 1..1024), max_length (512, 1..8192), entity_boost (+0.05 per query entity found, 0..1), entities (default: taken from the query; at most 32), intent_bias (false), intent (default: scirag.classify_intent; one of CRITIQUE, COMPARISON, DEFINITION, QUANTITY, MECHANISM, APPLICATION, STUDY_DETAIL, GENERAL), intent_weight (0.05), paragraphs (1..8: score a chunk at no more than that many paragraph openings, never more than the model folder''s reranker.json says; fewer pairs cost less), fused_scores (base scores when no model runs), deadline_ms (0..600000: time for the model, its loading included; a batch that would end past it is not started, the unscored rest keeps its fused order below the scored ones; scirag.retrieve passes what its deadline leaves). Bounds: query <= 4000 characters, <= 1000 candidates, each <= 100000 characters (else an error naming the bound); an LLM reranker scores the first 50 candidates, the rest keep their fused order below them (before boosts). status: ok, "partial: deadline, <m> of <n> scored", disabled (no model; boosts only), or "fallback: <reason>" with the input order (reason deadline: nothing scored in time). Ids the caller cannot read are dropped; an empty scope returns nothing before any model call.';

COMMIT;
