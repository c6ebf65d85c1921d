-- scirag.answer (docs/answers-and-evaluation.md): cited answers, the citation list, scope held
-- in answers (RLS decides the evidence; the call can only narrow it), retracted
-- documents excluded by default and the setting restored, an empty scope abstains
-- without retrieving, content-free traces, templates and eval rows under RLS.
-- Retrieval uses the keyword layer only, so the test needs no embedding model.
BEGIN;
SELECT plan(41);
\ir helpers/fixtures.psql

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('an-pub', 'public', 'src_an',
  ARRAY['The Quillon basin harvest produced 4,210 tonnes of zorbel fibre in 2023, according to the regional survey.',
        'Zorbel fibre has an ash content of 3.7 % on a dry basis, measured on twelve bales.',
        'Field crews reported mild weather during the whole harvest season in the basin.'],
  title => 'Zorbel Survey') AS pub \gset
SELECT tests.add_doc('an-secret', 'restricted', 'src_an',
  ARRAY['The confidential zorbel enzyme dose is 9.9 mg per gram of glucan under the Vextran protocol.'],
  title => 'Vextran Memo') AS secret \gset
SELECT tests.add_doc('an-retracted', 'public', 'src_an',
  ARRAY['A later survey claimed the Quillon basin harvest produced 99,999 tonnes of zorbel fibre.'],
  retracted => true, title => 'Retracted Zorbel Claim') AS retracted \gset
SELECT tests.as_role(NULL);

CREATE TABLE tests.ans (tag text PRIMARY KEY, a jsonb);
GRANT ALL ON tests.ans TO PUBLIC;
CREATE FUNCTION tests.kw(extra jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT '{"retrieve": {"layers": ["keyword"]}}'::jsonb || extra $$;

-- ---------------------------------------------------------------- the function
SELECT has_function('scirag', 'answer', ARRAY['text', 'jsonb'], 'scirag.answer(text, jsonb) exists');
SELECT is((SELECT prosecdef AND proowner = 'scirag_api'::regrole FROM pg_proc WHERE oid = 'scirag.answer(text,jsonb)'::regprocedure), true,
  'scirag.answer is a reader API function (SECURITY DEFINER owned by scirag_api; retrieval applies the caller''s scope)');
SELECT ok((SELECT 'search_path=pg_catalog, pg_temp' = ANY (proconfig) FROM pg_proc
           WHERE oid = 'scirag.answer(text,jsonb)'::regprocedure), 'scirag.answer pins its search_path');

-- ---------------------------------------------------------------- as a reader
SELECT tests.as_role('scirag_reader');
INSERT INTO tests.ans VALUES ('qty', scirag.answer('How many tonnes of zorbel fibre did the Quillon basin harvest produce?', tests.kw()));
SELECT ok((SELECT a ?& ARRAY['answer', 'abstained', 'answerer', 'citations', 'sources', 'retrieval', 'prompt_sources', 'checks', 'trace']
           FROM tests.ans WHERE tag = 'qty'), 'the answer object has answer, citations, sources, retrieval, prompt_sources, checks and trace');
SELECT is((SELECT a->>'answerer' FROM tests.ans WHERE tag = 'qty'), 'extractive', 'offline, the extractive answerer answers');
SELECT ok((SELECT a->>'answer' LIKE '%4,210 tonnes%' FROM tests.ans WHERE tag = 'qty'),
  'a quantity question is answered with the sentence carrying the number and unit');
SELECT ok((SELECT a->>'answer' ~ '\[1\]' FROM tests.ans WHERE tag = 'qty'), 'the answer cites its source inline as [1]');
SELECT is((SELECT a->'citations'->0->>'external_id' FROM tests.ans WHERE tag = 'qty'), 'an-pub',
  'citation [1] maps to the document it came from');
SELECT ok((SELECT (a->'citations'->0) ?& ARRAY['n', 'document_id', 'chunk_id', 'title', 'cite'] FROM tests.ans WHERE tag = 'qty'),
  'a citation carries number, document, chunk, title and a cite string');
SELECT is((SELECT (a->'citations'->0->>'chunk_id')::bigint FROM tests.ans WHERE tag = 'qty'),
  (SELECT chunk_id FROM tests.fx WHERE external_id = 'an-pub' AND ordinal = 1), 'the cited chunk is the one holding the number');
SELECT ok((SELECT (a->'checks'->>'citations_ok')::boolean AND (a->'checks'->>'numbers_ok')::boolean FROM tests.ans WHERE tag = 'qty'),
  'the mechanical checks pass: citations point at provided sources, numbers appear in cited sources');
SELECT ok((SELECT (a->'checks'->>'supports_ok')::boolean AND (a->'checks'->>'claims')::int >= 1 FROM tests.ans WHERE tag = 'qty'),
  'the supports check passes: the cited sentence holds the claim''s number and terms together');
SELECT ok((SELECT a->'trace'->'stages' @> '[{"stage": "checks", "supports_ok": true}]' FROM tests.ans WHERE tag = 'qty'),
  'the trace reports the supports check next to citations and numbers');
SELECT throws_ok($$SELECT scirag.answer('How many tonnes?', '{"consolidate": {"gap": 1}}')$$, '22023', NULL,
  'a bad evidence option is refused as invalid_parameter_value (22023)');
SELECT throws_ok($$SELECT scirag.answer('   ')$$, '22023', NULL, 'an empty question is refused as invalid_parameter_value');
SELECT is((SELECT jsonb_array_length(a->'prompt_sources') FROM tests.ans WHERE tag = 'qty'),
  (SELECT jsonb_array_length(a->'sources') FROM tests.ans WHERE tag = 'qty'), 'without compression the model saw every numbered source');
SELECT is_empty($$SELECT 1 FROM tests.ans, jsonb_array_elements(a->'retrieval') r
                  WHERE tag = 'qty' AND r->>'external_id' = 'an-retracted'$$,
  'retracted documents are excluded from answers by default');
SELECT ok((SELECT a->>'answer' NOT LIKE '%99,999%' FROM tests.ans WHERE tag = 'qty'), 'the retracted figure is not in the answer');
SELECT is(coalesce(current_setting('scirag.exclude_retracted', true), ''), '',
  'scirag.exclude_retracted is restored after the call');
SELECT is((SELECT count(*)::int FROM scirag.retrieve('zorbel fibre tonnes Quillon', 10, options => '{"layers": ["keyword"]}')
           WHERE external_id = 'an-retracted'), 1, 'a later plain retrieve in the same transaction still sees the retracted document');
INSERT INTO tests.ans VALUES ('incl', scirag.answer('How many tonnes of zorbel fibre did the Quillon basin harvest produce?',
                                                    tests.kw('{"include_retracted": true}')));
SELECT ok(EXISTS (SELECT 1 FROM tests.ans, jsonb_array_elements(a->'retrieval') r
                  WHERE tag = 'incl' AND r->>'external_id' = 'an-retracted'), 'include_retracted lets retracted documents back in');
SET LOCAL scirag.exclude_retracted = on;
INSERT INTO tests.ans VALUES ('narrow', scirag.answer('How many tonnes of zorbel fibre did the Quillon basin harvest produce?',
                                                      tests.kw('{"include_retracted": true}')));
SELECT is_empty($$SELECT 1 FROM tests.ans, jsonb_array_elements(a->'retrieval') r
                  WHERE tag = 'narrow' AND r->>'external_id' = 'an-retracted'$$,
  'an option cannot widen scope: with the session excluding retracted documents, include_retracted changes nothing');
SELECT is(current_setting('scirag.exclude_retracted'), 'on', 'and the session setting is left as it was');
SET LOCAL scirag.exclude_retracted = off;

-- Scope holds in answers: the restricted memo can never reach a reader.
INSERT INTO tests.ans VALUES ('secret', scirag.answer('What zorbel enzyme dose does the Vextran protocol use per gram of glucan?', tests.kw()));
SELECT ok((SELECT strpos(a::text, '9.9 mg') = 0 AND strpos(a::text, 'confidential zorbel') = 0 FROM tests.ans WHERE tag = 'secret'),
  'no part of a reader''s answer object (answer, sources, retrieval, prompt view) carries restricted text');
SELECT ok((SELECT (a->>'abstained')::boolean FROM tests.ans WHERE tag = 'secret'),
  'the reader is told the sources do not contain it');
SELECT tests.as_role('scirag_loader');
SET LOCAL scirag.licenses = 'public,restricted';
SELECT ok(strpos(scirag.answer('What zorbel enzyme dose does the Vextran protocol use per gram of glucan?', tests.kw())->>'answer', '9.9 mg') > 0,
  'a caller whose scope includes restricted documents gets the restricted answer (the probe can see a leak)');
RESET scirag.licenses;
SELECT tests.as_role('scirag_reader');

-- Planted unanswerable question: the sources never mention it.
SELECT ok((scirag.answer('What is the boiling point of zorbel resin under vacuum distillation?', tests.kw())->>'abstained')::boolean,
  'a question about something no document in scope mentions is abstained on');

-- A typo is not a thing the sources lack: a word one edit away from a word of the
-- caller's documents does not count as unknown ("harvset"), a word one edit away only
-- from a restricted document's word does (the check reads the caller's statistics).
INSERT INTO tests.ans VALUES ('typo', scirag.answer('How much zorbel fibre did Quillon harvset?', tests.kw()));
SELECT ok((SELECT NOT (a->>'abstained')::boolean AND strpos(a->>'answer', '4,210') > 0 FROM tests.ans WHERE tag = 'typo'),
  'a question with a typo of a word in scope ("harvset") is answered');
INSERT INTO tests.ans VALUES ('typo-secret', scirag.answer('How much zorbel glucna is in the fibre?', tests.kw()));
SELECT ok((SELECT (a->>'abstained')::boolean AND strpos(a->>'answer', 'mentions "glucna"') > 0 FROM tests.ans WHERE tag = 'typo-secret'),
  'a word one edit away only from a restricted document''s word stays unknown to the reader');

-- Empty scope: abstain, and call neither retrieval nor any model.
DO $$ BEGIN PERFORM set_config('scirag.last_trace', '{"sentinel": true}', true); END $$;
SET LOCAL scirag.licenses = '';
INSERT INTO tests.ans VALUES ('empty', scirag.answer('How many tonnes of zorbel fibre did the Quillon basin harvest produce?'));
SELECT ok((SELECT (a->>'abstained')::boolean AND jsonb_array_length(a->'retrieval') = 0 AND a->'trace'->>'scope' = 'empty'
           FROM tests.ans WHERE tag = 'empty'), 'an empty scope returns an abstention with no evidence');
SELECT is(scirag.last_trace(), '{"sentinel": true}'::jsonb, 'an empty scope runs no retrieval at all');
RESET scirag.licenses;

SELECT ok((SELECT strpos(lower((a->'trace')::text), 'zorbel') = 0 AND strpos(lower((a->'trace')::text), 'quillon') = 0
           FROM tests.ans WHERE tag = 'qty'), 'the trace is content-free (no question or chunk words)');
SELECT throws_like($$SELECT scirag.answer('anything', '{"bogus": 1}')$$, '%unknown option(s) bogus%',
  'unknown options are refused');
SELECT ok(scirag.answer_text('How many tonnes of zorbel fibre did the Quillon basin harvest produce?', tests.kw()) ~ E'\\[1\\] .*Zorbel Survey',
  'answer_text prints the answer followed by its numbered citations');

-- ---------------------------------------------------------------- templates
SELECT throws_ok($$UPDATE scirag.prompt_templates SET template = template || ' ' WHERE kind = 'answer'$$, '42501', NULL,
  'a reader cannot change what answers say (prompt templates)');
SELECT tests.as_role(NULL);
SELECT throws_ok($$INSERT INTO scirag.prompt_templates (name, kind, system_text, template, description)
                   VALUES ('peek', 'judge_grounding', 'grade', '$QUESTION $ANSWER $SOURCES $REFERENCE', 'x')$$,
  '23514', NULL, 'no grounding-judge template can show the judge the reference answer');
SELECT throws_ok($$INSERT INTO scirag.prompt_templates (name, kind, system_text, template, description)
                   VALUES ('nosrc', 'answer', 'answer', 'Question: $QUESTION', 'x')$$,
  '23514', NULL, 'an answer template must carry $SOURCES and $QUESTION');

-- ---------------------------------------------------------------- evaluation rows under RLS
SELECT tests.as_role('scirag_loader');
INSERT INTO scirag.eval_questions (dataset, question_id, question, expected_answer, reference_documents, origin)
VALUES ('tst', 'pub', 'q', 'a', ARRAY['an-pub'], 't'), ('tst', 'sec', 'q', 'the dose is 9.9 mg', ARRAY['an-secret'], 't');
-- (filed under the default reader scope: a run is visible only within the reader's scope, policies/eval_scope)
INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, scope_licenses)
VALUES ('answer', 'tst', 'x', '{}', '{}', ARRAY['public', 'open_commercial']) RETURNING id AS run \gset
INSERT INTO scirag.eval_answers (run_id, question_id, expect_abstain, answer, answerer, abstained, evidence_documents,
  sources_shown, citations_ok, numbers_ok, abstention_ok, judge_status)
VALUES (:run, 'pub', false, 'fine [1]', 'extractive', false, ARRAY[:pub]::bigint[], 1, true, true, true, 'skipped (no model configured)'),
       (:run, 'sec', false, 'the dose is 9.9 mg [1]', 'extractive', false, ARRAY[:pub, :secret]::bigint[], 2, true, true, true,
        'skipped (no model configured)');
SELECT throws_ok(format($$INSERT INTO scirag.eval_answers (run_id, question_id, expect_abstain, answer, answerer, abstained,
                   sources_shown, citations_ok, numbers_ok, abstention_ok, judge_status, grounding_status, groundedness)
                   VALUES (%s, 'bad', false, 'x', 'e', false, 0, true, true, true, 'failed', 'failed', 1.5)$$, :run),
  '23514', NULL, 'a failed judge pass cannot carry a score (no coerced scores)');
SELECT tests.as_role('scirag_reader');
SELECT is(ARRAY(SELECT question_id FROM scirag.eval_answers WHERE run_id = :run ORDER BY 1), ARRAY['pub'],
  'a reader sees an evaluated answer only when every document behind it is visible');
SELECT is(ARRAY(SELECT question_id FROM scirag.eval_questions WHERE dataset = 'tst' ORDER BY 1), ARRAY['pub'],
  'a reader sees a seed question only when its reference documents are visible');
SELECT is((SELECT n_questions FROM scirag.eval_answer_metrics WHERE run_id = :run), 1::bigint,
  'the per-run answer metrics view aggregates only what the caller may see');
SELECT tests.as_role(NULL);

SELECT * FROM finish();
ROLLBACK;
