-- Deploy scirag:functions/rerank
-- Reranking behind one protocol (python/plpy_helpers/scirag_helpers/rerank.py):
-- an LLM adapter, a local cross-encoder adapter (ONNX model from a path the admin
-- provides), entity boost and intent bias. Off until an ablation earns it; a
-- failing reranker returns the fused order with a content-free status.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.rerank(query text, chunk_ids bigint[], contents text[], options jsonb DEFAULT '{}')
RETURNS TABLE (chunk_id bigint, score double precision, status text)
LANGUAGE plpython3u VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.rerank import rerank_sql
return rerank_sql(plpy, GD, query, chunk_ids, contents, options)
$$;
COMMENT ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) IS
  'Reorders candidate chunks (contents as the caller shows them, e.g. enriched). options: reranker none|llm|cross_encoder, model_path (folder with model.onnx + tokenizer.json), batch_size (8), max_length (512), entity_boost (+0.05 per query entity found), entities (default: taken from the query), intent_bias (false), intent (default: scirag.classify_intent), intent_weight (0.05), fused_scores (base scores when no model runs). status: ok, disabled (no model; boosts only), or "fallback: <reason>" with the input order. Ids the caller cannot read are dropped; an empty scope returns nothing before any model call.';

REVOKE ALL ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.rerank(text, bigint[], text[], jsonb) TO scirag_reader, scirag_loader;
COMMIT;
