-- Two evaluation runs side by side (functions/eval_compare): questions are paired by id,
-- a question only one run scored is left out, true/false count as 1/0 and a null is no
-- value; the paired difference, its standard error and the medians are those computed
-- by hand below; and the function reads under the caller's policies, so a reader gets
-- nothing of a run it may not see.
BEGIN;
SELECT plan(10);
\ir helpers/fixtures.psql

SELECT tests.as_role('scirag_loader');
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, scope_licenses)
VALUES ('beir', 'cmp', 'before', '{}', '{}', ARRAY['open_commercial', 'public']) RETURNING id AS a \gset
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, scope_licenses)
VALUES ('beir', 'cmp', 'after', '{}', '{}', ARRAY['open_commercial', 'public']) RETURNING id AS b \gset
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, scope_licenses)
VALUES ('beir', 'cmp', 'wide', '{}', '{}', ARRAY['open_commercial', 'public', 'restricted']) RETURNING id AS hidden \gset
INSERT INTO scirag.eval_results (run_id, question_id, metrics, retrieved, ms) VALUES
  (:a, 'q1', '{"f1": 0.2, "hit": true, "label": "x"}', '{}', 10),
  (:a, 'q2', '{"f1": 0.5, "hit": false}', '{}', 30),
  (:a, 'q3', '{"f1": 0.0}', '{}', 20),
  (:a, 'only-a', '{"f1": 1.0}', '{}', 5),
  (:b, 'q1', '{"f1": 0.6, "hit": true, "label": "y"}', '{}', 12),
  (:b, 'q2', '{"f1": 0.5, "hit": true}', '{}', 20),
  (:b, 'q3', '{"f1": 0.3, "hit": null}', '{}', 40),
  (:b, 'only-b', '{"f1": 0.0}', '{}', 5),
  (:hidden, 'q1', '{"f1": 0.9}', '{}', 1);

SELECT is(ARRAY(SELECT metric FROM scirag.eval_compare(:a, :b)), ARRAY['f1', 'hit', 'ms'],
  'one row per number or true/false metric and the time (a text metric is none)');
SELECT is((SELECT (n, round(mean_a::numeric, 4), round(mean_b::numeric, 4), better, worse)::text
           FROM scirag.eval_compare(:a, :b) WHERE metric = 'f1'),
  '(3,0.2333,0.4667,2,0)', 'F1: the three questions both runs scored, not one scored by one run only');
SELECT is((SELECT round(diff::numeric, 4) FROM scirag.eval_compare(:a, :b) WHERE metric = 'f1'), 0.2333,
  'the mean paired difference B - A');
SELECT is((SELECT round(se::numeric, 4) FROM scirag.eval_compare(:a, :b) WHERE metric = 'f1'), 0.1202,
  'its standard error: the differences'' sample deviation over the square root of the pairs');
SELECT is((SELECT (n, diff, better)::text FROM scirag.eval_compare(:a, :b) WHERE metric = 'hit'), '(2,0.5,1)',
  'true/false as 1/0; a null is no value, so that question is not paired');
SELECT is((SELECT (median_a, median_b, mean_b)::text FROM scirag.eval_compare(:a, :b) WHERE metric = 'ms'), '(20,20,24)',
  'the time: both medians and means over the paired questions');
SELECT is((SELECT round(diff::numeric, 4) FROM scirag.eval_compare(:b, :a) WHERE metric = 'f1'), -0.2333,
  'swapping the runs turns the difference round');
SELECT is((SELECT (diff, se, better, worse)::text FROM scirag.eval_compare(:a, :a) WHERE metric = 'f1'), '(0,0,0,0)',
  'a run against itself: no difference');

SELECT tests.as_role('scirag_reader');
SELECT is((SELECT round(diff::numeric, 4) FROM scirag.eval_compare(:a, :b) WHERE metric = 'f1'), 0.2333,
  'a reader compares the runs it may see');
SELECT is_empty(format('SELECT * FROM scirag.eval_compare(%s, %s)', :a, :hidden),
  'and gets nothing of a run whose scope is wider than its own');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
