-- Evaluation rows within the caller's scope (issue 13 item 7, policies/eval_scope):
-- a run is visible only when the scope it ran under lies within the reader's, its
-- fingerprint counts only that scope (scirag.eval_scope), and eval_results never list
-- a question eval_questions hides. Readers keep SELECT on the eval tables (BI tools):
-- these policies are the wall, tested here on the tables and views readers read.
BEGIN;
SELECT plan(16);
\ir helpers/fixtures.psql

-- ---------------------------------------------------------------- fixtures
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('ev-pub', 'public', 'src_main', ARRAY['public evidence']) AS pub \gset
SELECT tests.add_doc('ev-oc', 'open_commercial', 'src_other', ARRAY['open commercial evidence']) AS oc \gset
SELECT tests.add_doc('ev-sec', 'restricted', 'src_main', ARRAY['the dose is 9.9 mg']) AS sec \gset
INSERT INTO scirag.eval_questions (dataset, question_id, question, expected_answer, reference_documents, origin)
VALUES ('evs', 'q-pub', 'q', 'a', ARRAY['ev-pub'], 't'), ('evs', 'q-sec', 'q', 'the dose is 9.9 mg', ARRAY['ev-sec'], 't');
-- a run under the default reader scope, one under a wider scope, one written without a scope
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, scope_licenses, metrics)
VALUES ('retrieval', 'evs', 'narrow', '{}', '{"documents": 2}', ARRAY['open_commercial', 'public'], '{"mrr": 0.5}')
RETURNING id AS narrow \gset
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, scope_licenses, metrics)
VALUES ('retrieval', 'evs', 'wide', '{}', '{"documents": 3}', ARRAY['open_commercial', 'public', 'restricted'], '{"mrr": 0.7}')
RETURNING id AS wide \gset
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint)
VALUES ('beir', 'evs', 'unscoped', '{}', '{"documents": 3}') RETURNING id AS unscoped \gset
INSERT INTO scirag.eval_results (run_id, question_id, metrics, retrieved)
VALUES (:narrow, 'q-pub', '{}', ARRAY['ev-pub']), (:narrow, 'q-sec', '{}', '{}'),
       (:wide, 'q-pub', '{}', ARRAY['ev-pub']), (:wide, 'q-sec', '{}', ARRAY['ev-sec']);
INSERT INTO scirag.eval_answers (run_id, question_id, expect_abstain, answer, answerer, abstained, evidence_documents,
  sources_shown, citations_ok, numbers_ok, abstention_ok, judge_status)
VALUES (:narrow, 'q-pub', false, 'fine [1]', 'extractive', false, ARRAY[:pub]::bigint[], 1, true, true, true, 'skipped (no model configured)'),
       (:narrow, 'q-sec', true, 'The sources do not contain it.', 'extractive', true, '{}', 0, true, true, true, 'skipped (no model configured)');

-- a reader whose ceiling is one source only
SELECT tests.as_role(NULL);
SELECT tests.login_role('onesrc') AS onesrc \gset
SELECT tests.grant_like('scirag_reader', :'onesrc');
INSERT INTO scirag.role_ceilings (role_name, licenses, sources, note)
VALUES (:'onesrc', ARRAY['public', 'open_commercial'], ARRAY['src_main'], 'test');

-- ---------------------------------------------------------------- the default reader
SELECT tests.as_role('scirag_reader');
SELECT is(ARRAY(SELECT config_name FROM scirag.eval_runs WHERE dataset = 'evs' ORDER BY 1), ARRAY['narrow'],
  'a reader sees only the run whose scope lies within its own (not a wider one, not one written without a scope)');
SELECT is(ARRAY(SELECT config_name FROM scirag.eval_metrics WHERE dataset = 'evs' ORDER BY 1), ARRAY['narrow'],
  'eval_metrics (BI) shows the same runs');
SELECT is(ARRAY(SELECT config_name FROM scirag.eval_config_metrics WHERE dataset = 'evs' ORDER BY 1), ARRAY['narrow'],
  'eval_config_metrics (BI) shows the same runs, fingerprints included');
SELECT is(ARRAY(SELECT question_id FROM scirag.eval_results WHERE run_id = :narrow ORDER BY 1), ARRAY['q-pub'],
  'eval_results lists no question that eval_questions hides');
SELECT is((SELECT count(*)::int FROM scirag.eval_results WHERE run_id = :wide), 0, 'nor anything of a hidden run');
SELECT is(ARRAY(SELECT question_id FROM scirag.eval_answers WHERE run_id = :narrow ORDER BY 1), ARRAY['q-pub'],
  'eval_answers: only answers to visible questions (an abstention on a hidden one included)');
SELECT is(ARRAY(SELECT question_id FROM scirag.eval_questions WHERE dataset = 'evs'), ARRAY['q-pub'],
  'eval_questions: only questions whose references are visible');

-- the fingerprint a run records is computed within the evaluating connection's scope
SELECT is((SELECT scirag.eval_scope()->'licenses'), '["open_commercial", "public"]'::jsonb,
  'eval_scope() records the caller''s license classes');
SELECT is((SELECT (scirag.eval_scope()->'fingerprint'->>'documents')::int), 2,
  'and counts only the documents that scope holds (public and open_commercial, not the restricted one)');
SET LOCAL scirag.licenses = 'public';
SELECT is((SELECT (scirag.eval_scope()->'fingerprint'->>'documents')::int), 1, 'a narrower scope counts fewer');
SELECT is((SELECT count(*)::int FROM scirag.eval_runs WHERE dataset = 'evs'), 0,
  'and sees no run that ran under a wider scope than its own');
RESET scirag.licenses;

-- ---------------------------------------------------------------- sources
SELECT tests.as_role(:'onesrc');
SELECT is((SELECT count(*)::int FROM scirag.eval_runs WHERE dataset = 'evs'), 0,
  'a reader limited to one source does not see a run over every source');
SELECT tests.as_role('scirag_loader');
UPDATE scirag.eval_runs SET scope_sources = ARRAY['src_main'] WHERE id = :narrow;
SELECT tests.as_role(:'onesrc');
SELECT is(ARRAY(SELECT config_name FROM scirag.eval_runs WHERE dataset = 'evs'), ARRAY['narrow'],
  'but sees a run limited to its source');
SELECT is((SELECT scirag.eval_scope()->'sources'), '["src_main"]'::jsonb, 'eval_scope() records the sources too');

-- ---------------------------------------------------------------- the loader
SELECT tests.as_role('scirag_loader');
SELECT is((SELECT count(*)::int FROM scirag.eval_runs WHERE dataset = 'evs'), 3, 'the loader reads every run');
SELECT tests.as_role('scirag_reader');
SELECT throws_ok($$UPDATE scirag.eval_runs SET scope_licenses = ARRAY['public']$$, '42501', NULL,
  'a reader cannot re-file a run under a narrower scope');
SELECT tests.as_role(NULL);

SELECT * FROM finish();
ROLLBACK;
