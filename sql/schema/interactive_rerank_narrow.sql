-- Deploy scirag:schema/interactive_rerank_narrow
-- Asking one paper reranks its passages (issue 23). A question scoped to a few papers
-- (the positive filters admit at most 1,000 chunks) gets the rerank stage in the
-- interactive profile: the cross-encoder trained here scores the fused pool (k, 10 for
-- scirag.answer) at the openings of each chunk's first two paragraphs and blends with
-- the fused score (the model folder's fused_weight_one_document for a pool from one
-- paper). Chosen on 300 QASPER train questions the model never trained on, each scoped
-- to its paper (evidence recall@5): fused order 0.893; reranked, pools of 8-20 chunks
-- at 2-6 openings gave 0.900-0.917, all within three questions of each other, and the
-- pool of 10 at two openings 0.910 with the fewest pairs among those (about 17, at
-- 1.7 ms each on one thread; six openings: 30 pairs for 0.907). The layers' short road
-- for such a scope (functions/scope_narrow, functions/search_vector_narrow) saved more
-- than this spends. A question over the whole library is not reranked (narrow_only):
-- its latency and order stay as they were (schema/deep_rerank_narrow does the same for
-- the deep profile).
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = config || '{"rerank": {"reranker": "cross_encoder", "batch_size": 16, "entity_boost": 0, "paragraphs": 2, "narrow_only": true}}'::jsonb,
    description = 'humans waiting on a spinner: dense + keyword, score fusion, short budgets; a question asked of a few papers is reranked by the cross-encoder'
WHERE name = 'interactive';
COMMIT;
