-- Positive scope filters (scirag.documents, years, authors, journals, dois): they only
-- narrow, in every layer, before it ranks. Two public documents of one source: "other"
-- matches the query better than "chosen" in both the dense and the keyword sense, so
-- a layer that filtered after ranking would come back short at k = 5.
VACUUM (SKIP_LOCKED) scirag.chunks;
BEGIN;
SELECT plan(42);
\ir helpers/fixtures.psql

CREATE TABLE tests.qv AS SELECT tests.frame_vec(0) AS q;
GRANT SELECT ON tests.qv TO PUBLIC;
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('sf-chosen', 'public', 'src_sf',
  (SELECT array_agg(format('quokka burrow note %s with several unrelated filler words about other matters', i) ORDER BY i)
   FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(40 + i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'chosen') AS doc_chosen \gset
SELECT tests.add_doc('sf-other', 'public', 'src_sf',
  (SELECT array_agg(format('quokka burrow quokka burrow report %s', i) ORDER BY i) FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'other') AS doc_other \gset
SELECT tests.add_doc('sf-restricted', 'restricted', 'src_sf',
  (SELECT array_agg(format('quokka burrow quokka burrow secret %s', i) ORDER BY i) FROM generate_series(1, 5) i),
  (SELECT array_agg(tests.fvec(5 + i, i * 50, 0) ORDER BY i) FROM generate_series(1, 5) i),
  tag => 'restricted') AS doc_restricted \gset
SELECT tests.as_role(NULL);
UPDATE scirag.documents SET year = 2019, authors = ARRAY['Lovelace, Ada', 'Bo Fixture'],
       journal = 'Journal of Marsupial Tests', doi = '10.5555/ABC.1' WHERE id = :doc_chosen;
UPDATE scirag.documents SET year = 2021, authors = ARRAY['Alan Turing'],
       journal = 'Other Venue', doi = '10.5555/xyz.2' WHERE id = :doc_other;
UPDATE scirag.documents SET year = 2019, authors = ARRAY['Lovelace, Ada'],
       journal = 'Journal of Marsupial Tests', doi = '10.5555/secret.3' WHERE id = :doc_restricted;

-- the rows each layer returns, as the tag of their documents
CREATE FUNCTION tests.tags_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE v text;
BEGIN
  EXECUTE format('SELECT string_agg(DISTINCT f.tag, '','' ORDER BY f.tag) FROM (%s) q JOIN tests.fx f USING (chunk_id)', query)
    INTO v;
  RETURN coalesce(v, '');
END $$;
GRANT EXECUTE ON FUNCTION tests.tags_of(text) TO PUBLIC;

SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.sources = 'src_sf';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_keyword('quokka burrow', 5)$$), 'other',
  'control: unfiltered, the five best BM25 chunks are the other document''s');
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_vector((SELECT q FROM tests.qv), 5)$$), 'other',
  'control: unfiltered, the five nearest chunks are the other document''s');

-- ------------------------------------------------------------ each filter, every layer
SET LOCAL scirag.documents = 'sf-chosen';
SELECT is(tests.try_count($$SELECT * FROM scirag.search_keyword('quokka burrow', 5)$$), '5',
  'documents: search_keyword(k 5) still returns five chunks');
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_keyword('quokka burrow', 5)$$), 'chosen',
  'documents: the keyword layer ranks only the chosen document');
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_vector((SELECT q FROM tests.qv), 5)$$), 'chosen',
  'documents: the dense layer ranks only the chosen document');
SELECT is(tests.try_count($$SELECT * FROM scirag.retrieve('quokka burrow', k => 5, query_embedding => (SELECT q FROM tests.qv))$$), '5',
  'documents: retrieve(k 5) returns five rows');
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.retrieve('quokka burrow', k => 5, query_embedding => (SELECT q FROM tests.qv))$$),
  'chosen', 'documents: retrieve fuses only the chosen document''s chunks');
SELECT is(tests.tags_of(format($$SELECT chunk_id FROM scirag.retrieve('quokka burrow', k => 5, query_embedding => (SELECT q FROM tests.qv),
                                  options => '{"layers": ["vector", "keyword", "graph", "community", "hyde"]}')$$)),
  'chosen', 'documents: with every layer on, still only the chosen document');
SELECT is((scirag.current_scope()->>'filtered_documents')::int, 1, 'current_scope reports one admitted document');
SELECT set_config('scirag.documents', :'doc_other', true) IS NOT NULL AS _ \gset
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_keyword('quokka burrow', 5)$$), 'other',
  'documents: a numeric document id works too');
RESET scirag.documents;

SET LOCAL scirag.years = '2015-2019';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.retrieve('quokka burrow', k => 10, query_embedding => (SELECT q FROM tests.qv))$$),
  'chosen', 'years 2015-2019: only the 2019 document');
SET LOCAL scirag.years = '2020-';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.retrieve('quokka burrow', k => 10, query_embedding => (SELECT q FROM tests.qv))$$),
  'other', 'years 2020-: only the 2021 document');
RESET scirag.years;
SET LOCAL scirag.authors = 'lovelace';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_keyword('quokka burrow', 10)$$), 'chosen',
  'authors: a case-insensitive part of a name');
SET LOCAL scirag.authors = 'nobody; turing';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_keyword('quokka burrow', 10)$$), 'other',
  'authors: any of several names (semicolon-separated)');
RESET scirag.authors;
SET LOCAL scirag.journals = 'marsupial';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_vector((SELECT q FROM tests.qv), 10)$$), 'chosen',
  'journals: a part of the venue name');
RESET scirag.journals;
SET LOCAL scirag.dois = 'https://doi.org/10.5555/abc.1';
SELECT is(tests.tags_of($$SELECT chunk_id FROM scirag.search_vector((SELECT q FROM tests.qv), 10)$$), 'chosen',
  'dois: with a resolver prefix and another case');
RESET scirag.dois;

-- ------------------------------------------------------------ they only narrow
SET LOCAL scirag.documents = 'sf-restricted';
SELECT is(tests.try_count($$SELECT * FROM scirag.retrieve('quokka burrow secret', k => 10, query_embedding => (SELECT q FROM tests.qv))$$), '0',
  'naming a restricted document does not widen the scope');
SET LOCAL scirag.documents = ',';
SELECT is(tests.try_count($$SELECT * FROM scirag.search_keyword('quokka burrow', 10)$$), '0',
  'a filter that names nothing admits nothing (fail closed)');
RESET scirag.documents;
SET LOCAL scirag.years = '2019';
SET LOCAL scirag.journals = 'other venue';
SELECT is(tests.try_count($$SELECT * FROM scirag.search_keyword('quokka burrow', 10)$$), '0',
  'filters combine with AND: 2019 and "other venue" match no document');
RESET scirag.journals;
RESET scirag.years;

-- ------------------------------------------------------------ the policies' two questions agree
-- Each scope_filter policy asks scope_filtered() before it resolves scope_documents():
-- they must agree on whether a filter is set, or a policy would pass every row.
SELECT is(scirag.scope_filtered(), false, 'no filter: scope_filtered() is false ...');
SELECT is(scirag.scope_documents(), NULL, '... and scope_documents() is NULL');
SET LOCAL scirag.documents = '   ';
SELECT is(scirag.scope_filtered(), false, 'a blank filter is no filter');
SET LOCAL scirag.documents = ' , ';
SELECT is(scirag.scope_filtered(), true, 'separators only: a filter, naming nothing ...');
SELECT is(scirag.scope_documents(), '{}'::bigint[], '... that admits nothing');
SELECT set_config('scirag.documents', format('sf-chosen, %s', :doc_other), true) IS NOT NULL AS _ \gset
SELECT is(scirag.scope_documents(), ARRAY[:doc_chosen, :doc_other]::bigint[],
  'a manifest id and a numeric id in one list');
SELECT set_config('scirag.documents', format('%s, sf-nothing', :doc_restricted), true) IS NOT NULL AS _ \gset
SELECT is(scirag.scope_documents(), '{}'::bigint[], 'a hidden document''s numeric id admits nothing');
RESET scirag.documents;
SET LOCAL scirag.authors = ' ; ';
SELECT is(scirag.scope_filtered(), true, 'authors set to separators only: a filter too');
RESET scirag.authors;

-- ------------------------------------------------------------ resolved once per statement
-- scope_documents() keeps its answer for the rest of the top-level statement, keyed on
-- the settings: a filter changed inside the statement is resolved again.
SELECT tests.as_role(NULL);
SET LOCAL track_functions = 'all';
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.documents = 'sf-chosen';
SELECT is(ARRAY[scirag.scope_documents()::text, set_config('scirag.documents', 'sf-other', true),
                scirag.scope_documents()::text],
          ARRAY[format('{%s}', :doc_chosen), 'sf-other', format('{%s}', :doc_other)],
          'a filter changed inside one statement is resolved again');
SET LOCAL scirag.documents = 'sf-chosen';
SELECT array_agg(scirag.scope_documents()) FROM generate_series(1, 5);
SELECT tests.as_role(NULL);
SELECT is((SELECT calls FROM pg_stat_xact_user_functions WHERE funcname = 'scope_documents_resolve'), 3::bigint,
          'five calls in one statement resolve once (after the two of the statement before)');
SELECT tests.as_role('scirag_reader');
SELECT is(scirag.scope_documents(), ARRAY[:doc_chosen]::bigint[], 'the next statement ...');
SELECT tests.as_role(NULL);
SELECT is((SELECT calls FROM pg_stat_xact_user_functions WHERE funcname = 'scope_documents_resolve'), 4::bigint,
          '... resolves anew');
SELECT tests.as_role('scirag_reader');
RESET scirag.documents;

-- ------------------------------------------------------------ bad values fail closed, loudly
SET LOCAL scirag.years = '19x9';
SELECT throws_ok($$SELECT * FROM scirag.retrieve('quokka burrow', k => 5)$$, '22023', NULL,
  'years = 19x9: retrieve raises 22023 naming the setting');
SET LOCAL scirag.years = '2021-2019';
SELECT throws_ok($$SELECT * FROM scirag.retrieve('quokka burrow', k => 5)$$, '22023', NULL,
  'a backwards year range raises 22023');
RESET scirag.years;

-- ------------------------------------------------------------ BM25 statistics stay the caller's
SELECT score AS unfiltered FROM scirag.search_keyword('quokka burrow note', 20) k
  JOIN tests.fx f USING (chunk_id) WHERE f.tag = 'chosen' AND f.ordinal = 1 \gset
SET LOCAL scirag.documents = 'sf-chosen';
SELECT is((SELECT score FROM scirag.search_keyword('quokka burrow note', 20) k
           JOIN tests.fx f USING (chunk_id) WHERE f.tag = 'chosen' AND f.ordinal = 1),
  :'unfiltered'::double precision,
  'a filtered chunk keeps the BM25 score of the caller''s classes');

-- ------------------------------------------------------------ a narrow scope is scored directly
-- When the filters admit at most 1,000 chunks (scirag.scope_narrow_documents()), the
-- dense and keyword layers score those chunks directly instead of walking the corpus's
-- indexes: the same ranking and the same scores as the wide walk gives them.
RESET scirag.documents;
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('sf-varied', 'public', 'src_sf',
  ARRAY['wombat tunnel',
        'wombat wombat tunnel survey of the long dry season in the south',
        'tunnel collapse observed near the river bank during the floods of the dry season',
        'wombat tunnel wombat dig wombat',
        'a note on nothing in particular, kept for its length and its many other words',
        'dry season'],
  (SELECT array_agg(tests.fvec(20 + 7 * i, i * 40, 0) ORDER BY i) FROM generate_series(1, 6) i),
  tag => 'varied') AS doc_varied \gset
-- 1,001 section chunks without embeddings: they count towards the limit and leave no
-- dead entries in the HNSW graph for the suites that run after this one
-- (tests.add_doc gives every chunk an embedding)
INSERT INTO scirag.documents (external_id, title, license, source, content_hash, parser)
VALUES ('sf-big', 'Fixture sf-big', 'public', 'src_sf', md5('fixture:sf-big'), 'text') RETURNING id AS doc_big \gset
INSERT INTO scirag.chunks (document_id, ordinal, kind, level, section_path, content, token_count, license, source)
SELECT :doc_big, i, 'section', 1, '1 Fixture', format('kangaroo pouch %s', i), 3, 'public', 'src_sf'
FROM generate_series(1, 1001) i;
SELECT tests.as_role(NULL);
CREATE FUNCTION tests.narrow_docs() RETURNS bigint[]
LANGUAGE sql STABLE AS $$ SELECT scirag.scope_narrow_documents() $$;
SELECT tests.through_api('tests.narrow_docs()');
GRANT EXECUTE ON FUNCTION tests.narrow_docs() TO PUBLIC;
-- the ranking of the sf-varied chunks as "id:score" (9 decimals), best first
CREATE FUNCTION tests.varied_ranking(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE v text;
BEGIN
  EXECUTE format('SELECT string_agg(q.chunk_id || '':'' || round(q.s::numeric, 9), '','' ORDER BY q.rank)
                  FROM (%s) q JOIN tests.fx f USING (chunk_id) WHERE f.tag = ''varied''', query) INTO v;
  RETURN v;
END $$;
GRANT EXECUTE ON FUNCTION tests.varied_ranking(text) TO PUBLIC;

SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.sources = 'src_sf';
SELECT is(tests.narrow_docs(), NULL, 'no positive filter: no narrow scope');
SELECT tests.varied_ranking($$SELECT chunk_id, rank, score AS s FROM scirag.search_keyword('wombat tunnel dry season', 50)$$) AS wide_kw \gset
SELECT tests.varied_ranking($$SELECT chunk_id, rank, distance AS s FROM scirag.search_vector((SELECT q FROM tests.qv), 50)$$) AS wide_vec \gset
SET LOCAL scirag.documents = 'sf-varied';
SELECT is(tests.narrow_docs(), ARRAY[:doc_varied]::bigint[], 'a one-paper filter is a narrow scope');
SELECT is(tests.varied_ranking($$SELECT chunk_id, rank, score AS s FROM scirag.search_keyword('wombat tunnel dry season', 50)$$),
  :'wide_kw', 'narrow scope: the keyword layer ranks and scores the paper''s chunks as the wide walk does');
SELECT tests.as_role(NULL);
SELECT is(scirag.kw_top_trace()->>'narrow', 'true', 'narrow scope: the keyword layer scored the admitted chunks directly');
SELECT tests.as_role('scirag_reader');
SELECT is(tests.varied_ranking($$SELECT chunk_id, rank, distance AS s FROM scirag.search_vector((SELECT q FROM tests.qv), 50)$$),
  :'wide_vec', 'narrow scope: the dense layer ranks the paper''s chunks as the index walk does, same distances');
SELECT is(tests.try_count($$SELECT * FROM scirag.search_keyword('wombat tunnel -dig', 50)$$), '3',
  'narrow scope: negation still applies (three chunks with wombat or tunnel and no dig)');
SET LOCAL scirag.documents = 'sf-varied, sf-big';
SELECT is(tests.narrow_docs(), NULL, 'filters admitting over 1,000 chunks: the layers walk their indexes');
SELECT is(tests.try_count($$SELECT * FROM scirag.search_keyword('wombat tunnel', 50)$$), '4',
  'and the keyword layer still ranks inside the filter (the four chunks with wombat or tunnel)');

SELECT * FROM finish();
ROLLBACK;
