-- Deploy scirag:schema/deep_rerank_narrow
-- The deep profile reranks a question asked of a few papers too. Since
-- schema/interactive_rerank_narrow, a question scoped to its paper was reranked by the
-- interactive profile and not by deep, so the generous profile ranked one paper worse
-- than the fast one. Deep now reranks such a scope (narrow_only) as issue 29's ablation
-- measured it: the fused pool of 20 at each chunk's paragraph openings as the model
-- folder says (six), the folder's blend (QASPER dev evidence recall@5 0.901 against
-- 0.871, docs/reranker.md). On 300 QASPER train questions the model never trained on
-- that setting gave 0.913 against 0.893 for the fused order (the variants tried lay
-- within 0.900-0.917). Over the whole library deep still reranks only when asked
-- (docs/reranker.md: on the graph layer's multi-hop demo the stage demoted the chunk
-- found through the graph).
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = config || '{"pool": 20, "rerank": {"reranker": "cross_encoder", "batch_size": 16, "entity_boost": 0, "narrow_only": true}}'::jsonb,
    description = 'agents, batch jobs and evaluation: dense, keyword, graph and community layers (HyDE on request), score fusion, generous budgets; a question asked of a few papers is reranked by the cross-encoder'
WHERE name = 'deep';
COMMIT;
