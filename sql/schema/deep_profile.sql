-- Deploy scirag:schema/deep_profile
-- The deep profile within a budget (issue 12): it took 398 ms p50 at 5k chunks and
-- scored below interactive on SciFact (0.7321 vs 0.7342 nDCG@10). Measured there and
-- on SciTab: the offline HyDE layer (pseudo-relevance feedback: a second keyword and
-- dense search plus a query embedding in PL/Python) added nothing in any weighting
-- tried (0.727-0.735) and cost most of the time. So deep is now vector, keyword,
-- graph and community; HyDE stays one option away ({"layers": [..., "hyde"]}, and
-- in deep-rrf) for a model-written passage. BM25 is scaled 'auto': min-max when the
-- graph or community layer found anything (that lets a graph-only hit into the top
-- 10 on multi-hop questions: the demo's chain ranks 9th with min-max, 12th with max),
-- max otherwise, so where no graph is extracted (SciFact, SciTab) deep ranks exactly
-- as interactive instead of 0.0009 nDCG@10 below it.
BEGIN;
UPDATE scirag.retrieval_profiles
SET config = jsonb_set(config #- '{layers, 4}', '{keyword_scale}', '"auto"'),
    description = 'agents, batch jobs and evaluation: dense, keyword, graph and community layers (HyDE on request), score fusion, generous budgets'
WHERE name = 'deep' AND config->'layers'->>4 = 'hyde';
COMMIT;
