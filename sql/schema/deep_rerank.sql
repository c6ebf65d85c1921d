-- Deploy scirag:schema/deep_rerank to pg
-- requires: schema/core
-- requires: functions/rerank
-- The reranker trained in this repository (issue 29): the admin setting
-- reranker_model_path gets the value "builtin", the folder shipped in
-- scirag_helpers/models/reranker (model.onnx + tokenizer.json, trained by
-- scripts/train_reranker.py; docs/reranker.md). An admin's own value is kept.
-- The deep profile does NOT rerank by default: the shipped weights are trained with
-- SciFact (CC BY-NC 2.0, so non-commercial: the default path takes permissive licenses
-- only), gain little on held-out claims and cost seconds per query on one core
-- (docs/reranker.md has the numbers). A caller turns the stage on per call with
-- options => '{"rerank": {"reranker": "cross_encoder"}}'; a missing model leaves the
-- fused order with the trace entry "fallback: model_unavailable".
BEGIN;

INSERT INTO scirag.settings (key, value, description)
VALUES ('reranker_model_path', 'builtin',
        'cross-encoder folder (model.onnx + tokenizer.json) the rerank stage loads; "builtin" is the folder shipped in scirag_helpers/models/reranker (docs/reranker.md)')
ON CONFLICT (key) DO NOTHING;

COMMIT;
