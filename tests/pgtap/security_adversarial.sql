-- Issue 13, the SQL side: a LOGIN role in scirag_reader tries to break or bend the
-- server through what it sends; each attack must end in a clear error (SQLSTATE
-- 22023, naming what was wrong) or change nothing. The end-to-end attacks (real
-- logins, manifests, timing, fuzz) are in tests/py/test_security_adversarial.py.
BEGIN;
SELECT plan(37);
\ir helpers/fixtures.psql

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('sa-pub', 'public', 'src_a', ARRAY['Barley straw is baled in Osgood County.', 'Corn stover yields.']) AS pub \gset
SELECT tests.add_doc('sa-res', 'restricted', 'src_a', ARRAY['cellulas secret saccharification yields']) AS res \gset
SELECT tests.add_doc('sa-retr', 'public', 'src_a', ARRAY['a retracted straw claim'], retracted => true) AS retr \gset
SELECT tests.login_role('attacker', 'scirag_reader') AS attacker \gset
SELECT tests.login_role('ghost') AS ghost \gset
-- issue 26 finding 1: a visible document citing a hidden one and a DOI not in the corpus
SELECT tests.add_doc('sc-citing', 'public', 'src_a', ARRAY['cites 10.5555/sa.hidden and 10.5555/sa.absent'], with_section => false) AS citing \gset
SELECT tests.add_doc('sc-hidden-cited', 'restricted', 'src_a', ARRAY['the hidden cited paper'], with_section => false) AS hcited \gset
SELECT tests.add_doc('sc-open-cited', 'public', 'src_a', ARRAY['the open cited paper'], with_section => false) AS ocited \gset
SELECT tests.add_doc('sc-big-hidden', 'restricted', 'src_a',
  ARRAY(SELECT 'hidden chunk number ' || g FROM generate_series(1, 200) AS g)) AS bighidden \gset
UPDATE scirag.documents SET doi = '10.5555/SA.HIDDEN' WHERE id = :hcited;
UPDATE scirag.documents SET doi = '10.5555/sa.open' WHERE id = :ocited;
INSERT INTO scirag.document_citations (document_id, cited_doi, origin)
VALUES (:citing, '10.5555/sa.hidden', 'crossref'), (:citing, '10.5555/sa.absent', 'crossref'),
       (:citing, '10.5555/sa.open', 'crossref'), (:hcited, '10.5555/sa.open', 'crossref');
UPDATE scirag.document_citations c SET cited_document_id = d.id FROM scirag.documents d
WHERE lower(d.doi) = c.cited_doi AND c.document_id IN (:citing, :hcited);
SELECT tests.as_role(NULL);
INSERT INTO scirag.role_ceilings (role_name, licenses, note)
VALUES (:'ghost', ARRAY['public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown'], 'test: to be dropped');
DROP ROLE :"ghost";

SELECT tests.as_role(:'attacker');

-- ---------------------------------------------------------------- citations (issue 26, finding 1)
SELECT results_eq(format($$SELECT cited_doi, resolved, cited_document_id, external_id, title, year, retracted, origin
                            FROM scirag.references(%s)$$, :citing),
  $$VALUES ('10.5555/sa.open'::text, true, $$ || :ocited || $$::bigint, 'sc-open-cited'::text, 'Fixture sc-open-cited'::text, 2024, false, 'crossref'::text),
           ('10.5555/sa.absent', false, NULL, NULL, NULL, NULL, NULL, 'crossref'),
           ('10.5555/sa.hidden', false, NULL, NULL, NULL, NULL, NULL, 'crossref')$$,
  'references: a hidden cited document is an unresolved DOI, exactly like one not in the corpus (it was dropped)');
SELECT is((SELECT count(*)::int FROM scirag.cited_by(:hcited)), 0, 'cited_by of a hidden document: nothing');
SELECT is((SELECT count(*)::int FROM scirag.cited_by(-7)), 0, 'cited_by of an unknown id: nothing');
SELECT is((SELECT count(*)::int FROM scirag.references(:hcited)), 0, 'references of a hidden document: nothing');
SELECT results_eq(format($$SELECT external_id FROM scirag.cited_by(%s)$$, :ocited), $$VALUES ('sc-citing'::text)$$,
  'cited_by of a visible document lists only visible citing documents');

-- ---------------------------------------------------------------- options (item 9)
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"rrf_k": -1}')$$, '22023',
  'scirag.retrieve: option "rrf_k" must be an integer between 1 and 10000 (got -1)',
  'rrf_k = -1 (a division by zero before) is refused, naming the option and its bounds');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', -5)$$, '22023',
  'scirag.retrieve: option "k" must be an integer between 1 and 1000 (got -5)', 'a negative k is refused');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"depth": "abc"}')$$, '22023',
  'scirag.retrieve: option "depth" must be an integer between 1 and 1000 (got string)', 'depth "abc": no raw cast error');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"weights": {"vector": "abc"}}')$$, '22023',
  'scirag.retrieve: option "weights.vector" must be a number between 0 and 100 (got string)', 'a weight that is not a number');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"layers": "vector"}')$$, '22023',
  'scirag.retrieve: option "layers" must be an array of layer names (got string)', 'layers must be an array');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"pool": 1000000}')$$, '22023',
  'scirag.retrieve: option "pool" must be an integer between 1 and 1000 (got 1000000)', 'pool has an upper bound');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"depths": {"vector": 100000}}')$$, '22023',
  'scirag.retrieve: option "depths.vector" must be an integer between 0 and 1000 (got 100000)', 'per-layer depth has an upper bound');
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"layer": ["vector"]}')$$, '22023', NULL,
  'an unknown option (a typo) is refused instead of ignored');
SELECT is((scirag.retrieve_config('interactive', 7, '{"depth": 30, "weights": {"vector": 0.9}}')->'weights'->>'keyword') IS NOT NULL
          AND (scirag.retrieve_config('interactive', 7, '{"depth": 30}')->>'depth') = '30'
          AND (scirag.retrieve_config('interactive', 7, '{}')->>'k') = '7', true,
  'retrieve_config: profile + options into one configuration, weights merged key by key');

-- ---------------------------------------------------------------- lengths (item 4)
SELECT throws_ok($$SELECT * FROM scirag.retrieve(repeat('A. ', 1400) || 'corn', 5)$$, '22023',
  'scirag.retrieve: the question is 4204 characters long, at most 4000 allowed', 'a question over 4000 characters is refused');
SELECT throws_ok($$SELECT * FROM scirag.text_units(repeat('x', 2000001))$$, '22023', NULL, 'text_units refuses a body over 2,000,000 characters');
SELECT is((SELECT count(*)::int FROM scirag.text_units(repeat('Corn grows well. ', 3000))), 3000,
  'text_units splits 3,000 sentences (linear: it took seconds before)');

-- ---------------------------------------------------------------- model files (item 3)
SELECT throws_ok($$SELECT * FROM scirag.retrieve('straw', 5, 'interactive', '{"rerank": {"reranker": "cross_encoder", "model_path": "/etc"}}')$$,
  '22023', NULL, 'retrieve: a reader cannot pick the model file the server loads');
SELECT throws_like($$SELECT * FROM scirag.rerank('q', ARRAY[1]::bigint[], ARRAY['a'], '{"reranker": "cross_encoder", "model_path": "/proc/self/environ"}')$$,
  '%"model_path" is not accepted from callers%', 'rerank: nor directly');

-- ---------------------------------------------------------------- strict settings (item 10)
SET LOCAL scirag.exclude_retracted = 't';
SELECT throws_ok($$SELECT count(*) FROM scirag.documents_visible()$$, '22023', 'scirag.exclude_retracted: invalid value "t"',
  'exclude_retracted = t (silently "off" before) fails every query');
SET LOCAL scirag.exclude_retracted = 'TRUE';
SELECT is(ARRAY(SELECT external_id::text FROM scirag.documents_visible() WHERE external_id LIKE 'sa-%' ORDER BY 1), ARRAY['sa-pub'],
  'exclude_retracted = TRUE hides the retracted document');
SET LOCAL scirag.exclude_retracted = 'off';
SELECT is(ARRAY(SELECT external_id::text FROM scirag.documents_visible() WHERE external_id LIKE 'sa-%' ORDER BY 1), ARRAY['sa-pub', 'sa-retr'],
  'exclude_retracted = off keeps it');
SELECT set_config('scirag.exclude_documents', 'sa-pub,no-such-doc,sa-res', true) AS _s \gset
SELECT is(scirag.current_scope()->>'excluded_documents_unresolved', '2',
  'current_scope reports the listed ids that match nothing visible (unknown and hidden alike)');
SELECT set_config('scirag.exclude_documents', '', true) AS _s \gset
SELECT set_config('scirag.sources', repeat('s,', 40000), true) AS _s \gset
SELECT throws_ok($$SELECT count(*) FROM scirag.documents_visible()$$, '22023', NULL, 'an oversized scirag.sources is refused');
SELECT set_config('scirag.sources', '', true) AS _s \gset

-- ---------------------------------------------------------------- ceilings (item 8)
SELECT lives_ok($$SELECT count(*) FROM scirag.retrieve('straw', 3, 'interactive', '{"layers": ["keyword"]}')$$,
  'a ceiling row of a dropped role breaks no reader');
SELECT is(scirag.scope_licenses(), ARRAY['open_commercial', 'public'], '... and widens nothing');
SELECT tests.as_role(NULL);
SELECT throws_ok($$INSERT INTO scirag.role_ceilings (role_name, licenses) VALUES ('no_such_role_sa', '{public}')$$,
  '42704', NULL, 'a ceiling for a role that does not exist is refused');

-- ---------------------------------------------------------------- array bounds and NUL (issue 26, notes)
SELECT tests.as_role(:'attacker');
SELECT throws_ok($$SELECT count(*) FROM scirag.mmr_select(ARRAY(SELECT g::bigint FROM generate_series(1, 1001) g),
                   ARRAY(SELECT 1.0::float8 FROM generate_series(1, 1001)), 5)$$, '22023',
  'scirag.mmr_select: the number of chunk_ids must be at most 1000 (got 1001)', 'mmr_select: at most 1,000 ids (2 million were taken)');
SELECT throws_ok($$SELECT count(*) FROM scirag.consolidate(ARRAY(SELECT g::bigint FROM generate_series(1, 2000000) g))$$, '22023',
  'scirag.consolidate: the number of chunk_ids must be at most 1000 (got 2000000)', 'consolidate: at most 1,000 ids');
SELECT throws_ok($$SELECT count(*) FROM scirag.enrich_chunks(ARRAY(SELECT g::bigint FROM generate_series(1, 1001) g))$$, '22023',
  'scirag.enrich_chunks: the number of chunk_ids must be at most 1000 (got 1001)', 'enrich_chunks: at most 1,000 ids');
SELECT throws_ok($$SELECT scirag.enrichment_metrics(ARRAY(SELECT g::bigint FROM generate_series(1, 1001) g))$$, '22023', NULL,
  'enrichment_metrics: bounded through enrich_chunks');
SELECT throws_ok($$SELECT count(*) FROM scirag.entities_visible(ARRAY(SELECT g::bigint FROM generate_series(1, 1001) g))$$, '22023',
  'scirag.entities_visible: the number of ids must be at most 1000 (got 1001)', 'entities_visible: at most 1,000 ids');
SELECT lives_ok($$SELECT count(*) FROM scirag.consolidate(ARRAY(SELECT g::bigint FROM generate_series(1, 1000) g))$$,
  '... 1,000 ids still pass');
-- A NUL never reaches a scirag function from SQL: PostgreSQL refuses it at input
-- (text cannot hold U+0000; jsonb refuses the \u0000 escape).
SELECT throws_ok($$SELECT count(*) FROM scirag.retrieve('straw', 5, 'interactive', '{"preset": "\u0000"}')$$, '22P05', NULL,
  'a NUL escape in options is refused before retrieve runs (22P05)');

-- ---------------------------------------------------------------- hidden vs missing ids (issue 26, finding 7)
-- The cost of document_outline must not grow with a hidden document: it may read none of
-- its chunks (it read every one and let row-level security drop them). Counted with the
-- transaction's own statistics, read as the superuser between the reader's calls.
SELECT tests.as_role(NULL);
SELECT pg_stat_get_xact_tuples_fetched('scirag.chunks'::regclass) AS f0 \gset
SELECT tests.as_role(:'attacker');
SELECT count(*) AS n_hidden FROM scirag.document_outline(:bighidden) \gset
SELECT tests.as_role(NULL);
SELECT pg_stat_get_xact_tuples_fetched('scirag.chunks'::regclass) AS f1 \gset
SELECT tests.as_role(:'attacker');
SELECT count(*) AS n_missing FROM scirag.document_outline(-42) \gset
SELECT tests.as_role(NULL);
SELECT pg_stat_get_xact_tuples_fetched('scirag.chunks'::regclass) AS f2 \gset
SELECT is(:n_hidden + :n_missing, 0, 'document_outline: no row for a hidden or a missing id');
SELECT is(:f1::bigint - :f0::bigint, 0::bigint, 'document_outline of a hidden 200-chunk document reads none of its chunks');
SELECT is(:f2::bigint - :f1::bigint, 0::bigint, '... exactly like a missing id');

SELECT * FROM finish();
ROLLBACK;
