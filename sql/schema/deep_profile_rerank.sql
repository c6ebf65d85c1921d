-- Deploy scirag:schema/deep_profile_rerank to pg
-- requires: schema/deep_rerank
-- requires: schema/deep_profile
-- The deep profile reranks its fused top 20 with the cross-encoder shipped in
-- scirag_helpers/models/reranker (issue 29): two layers of the MiniLM encoder, 64-token
-- pairs, trained here without SciFact (QASPER CC BY 4.0 and SciTab MIT, so the default
-- path stays permissive). It scores 50 candidates in about 95 ms on one core. On
-- held-out claims it puts the right item first more often (SciTab hit@1 0.574 -> 0.612,
-- MRR 0.696 -> 0.717; QASPER dev evidence recall@5 0.871 -> 0.883), SciFact nDCG@10
-- is level (+0.001), SciTab hit@5 one claim of 183 lower (docs/reranker.md). The model folder's reranker.json
-- gives the blend with the fused order and the pair length, so the profile names
-- neither. entity_boost 0: the figures were measured without the boost. A caller turns
-- the stage off with options => '{"rerank": {"reranker": "none"}}'; a missing model
-- leaves the fused order with the trace entry "fallback: model_unavailable". Only a
-- deep row that has no rerank stage of its own is changed.
BEGIN;

UPDATE scirag.retrieval_profiles
SET config = config || '{"pool": 20, "rerank": {"reranker": "cross_encoder", "batch_size": 16, "entity_boost": 0}}'::jsonb,
    description = 'agents, batch jobs and evaluation: dense, keyword, graph and community layers (HyDE on request), score fusion, the fused top 20 reranked by the cross-encoder trained here, generous budgets'
WHERE name = 'deep' AND NOT config ? 'rerank';

COMMIT;
