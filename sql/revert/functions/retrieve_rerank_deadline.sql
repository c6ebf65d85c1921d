-- Revert scirag:functions/retrieve_rerank_deadline: scirag.retrieve as
-- functions/retrieve_resolved defines it (the rerank stage without a deadline),
-- and scirag.rerank's comment as functions/rerank_bootstrap leaves it.
\ir ../../functions/retrieve_resolved.sql
BEGIN;
COMMENT ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) IS
  'Reorders candidate chunks (contents as the caller shows them, e.g. enriched). options: reranker none|llm|cross_encoder (its folder with model.onnx + tokenizer.json is the admin setting scirag.settings reranker_model_path; a model_path option is refused), batch_size (8, 1..1024), max_length (512, 1..8192), entity_boost (+0.05 per query entity found, 0..1), entities (default: taken from the query; at most 32), intent_bias (false), intent (default: scirag.classify_intent; one of CRITIQUE, COMPARISON, DEFINITION, QUANTITY, MECHANISM, APPLICATION, STUDY_DETAIL, GENERAL), intent_weight (0.05), fused_scores (base scores when no model runs). Bounds: query <= 4000 characters, <= 1000 candidates, each <= 100000 characters (else an error naming the bound); an LLM reranker scores the first 50 candidates, the rest keep their fused order below them (before boosts). status: ok, disabled (no model; boosts only), or "fallback: <reason>" with the input order. Ids the caller cannot read are dropped; an empty scope returns nothing before any model call.';
COMMIT;
