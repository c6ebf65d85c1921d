-- Revert scirag:functions/rerank_bootstrap: scirag.rerank as functions/rerank_main defines it
-- (rerank_main.sql), calling scirag.plpy_bootstrap() on every call.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.rerank(query text, chunk_ids bigint[], contents text[], options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, score double precision, status text)
LANGUAGE plpython3u VOLATILE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.rerank import rerank_sql
return rerank_sql(plpy, GD, query, chunk_ids, contents, options)
$$;
COMMENT ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) IS
  'Reorders candidate chunks (contents as the caller shows them, e.g. enriched). options: reranker none|llm|cross_encoder (its folder with model.onnx + tokenizer.json is the admin setting scirag.settings reranker_model_path; a model_path option is refused), batch_size (8, 1..1024), max_length (512, 1..8192), entity_boost (+0.05 per query entity found, 0..1), entities (default: taken from the query; at most 32), intent_bias (false), intent (default: scirag.classify_intent; one of CRITIQUE, COMPARISON, DEFINITION, QUANTITY, MECHANISM, APPLICATION, STUDY_DETAIL, GENERAL), intent_weight (0.05), fused_scores (base scores when no model runs). Bounds: query <= 4000 characters, <= 1000 candidates, each <= 100000 characters (else an error naming the bound); an LLM reranker scores the first 50 candidates, the rest keep their fused order below them (before boosts). status: ok, disabled (no model; boosts only), or "fallback: <reason>" with the input order. Ids the caller cannot read are dropped; an empty scope returns nothing before any model call.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.rerank(text, bigint[], text[], jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) TO scirag_loader, scirag_reader;
COMMIT;
