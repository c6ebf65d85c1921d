-- The graph layer under scope (docs/threat-model.md, docs/graph.md):
-- restricted, excluded, retracted and other-source evidence cannot seed, extend
-- or contribute a candidate to the walk, alias seeding included; every check has
-- a control showing that the same evidence IS used when the scope admits it.
BEGIN;
SELECT plan(42);
\ir helpers/fixtures.psql
\ir helpers/graph_fixtures.psql
-- this suite tests the graph policies themselves: readers may SELECT here, inside this
-- transaction only, what the reader API may (policies/reader_wall)
SELECT tests.open_evidence_to('scirag_reader') AS _ \gset

-- ---------------------------------------------------------------- fixtures
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('g-a', 'public', 'src_main', ARRAY['Zorblat County''s principal residue is quuxite straw.'], with_section => false);
SELECT tests.add_doc('g-b', 'public', 'src_main', ARRAY['quuxite straw carries 9.9 % frobium content.'], with_section => false);
SELECT tests.add_doc('g-c', 'public', 'src_main', ARRAY['frobium content is measured by a wet method.'], with_section => false);
SELECT tests.add_doc('g-r', 'restricted', 'src_main', ARRAY['Zorb Co borders the secretite fields.', 'quuxite straw: restricted notes.', 'hxsecret only here.'], with_section => false);
SELECT tests.add_doc('g-p', 'public', 'src_main', ARRAY['secretite is a public mineral.'], with_section => false);
SELECT tests.add_doc('g-x', 'public', 'src_main', ARRAY['quuxite straw with glimmerine and excludium.'], with_section => false) AS doc_x \gset
SELECT tests.add_doc('g-g', 'public', 'src_main', ARRAY['glimmerine notes.'], with_section => false);
SELECT tests.add_doc('g-t', 'public', 'src_main', ARRAY['quuxite straw relates to tarnite.'], retracted => true, with_section => false);
SELECT tests.add_doc('g-tt', 'public', 'src_main', ARRAY['tarnite notes.'], with_section => false);
SELECT tests.add_doc('g-s', 'public', 'src_other', ARRAY['quuxite straw with sourcite.'], with_section => false);
SELECT tests.add_doc('g-ss', 'public', 'src_main', ARRAY['sourcite notes.'], with_section => false);
SELECT tests.add_doc('g-o', 'open_commercial', 'src_main', ARRAY['quuxite straw with commite.'], with_section => false);
SELECT tests.add_doc('g-cite', 'public', 'src_main', ARRAY['a cited public report.'], with_section => false);
SELECT tests.add_doc('g-cite-r', 'restricted', 'src_main', ARRAY['a cited restricted report.'], with_section => false);

SELECT tests.kg_entity('Zorblat County', 'County', true) AS zorblat \gset
SELECT tests.kg_entity('quuxite straw', 'Residue', true) AS quux \gset
SELECT tests.kg_entity('frobium content', 'Property') AS frob \gset
SELECT tests.kg_entity('secretite', 'Product') AS secr \gset
SELECT tests.kg_entity('hxsecret', 'Product') AS hx \gset
SELECT tests.kg_entity('glimmerine', 'Product') AS glim \gset
SELECT tests.kg_entity('excludium', 'Product') AS excl \gset
SELECT tests.kg_entity('tarnite', 'Product') AS tarn \gset
SELECT tests.kg_entity('sourcite', 'Product') AS sourc \gset
SELECT tests.kg_entity('commite', 'Product') AS comm \gset

SELECT tests.kg_mention(:zorblat, tests.chunk('g-a', 1), 'Zorblat County');
SELECT tests.kg_mention(:quux, tests.chunk('g-a', 1), 'quuxite straw');
SELECT tests.kg_edge(:quux, :zorblat, 'AVAILABLE_IN', tests.chunk('g-a', 1), 1.0, 'Zorblat County''s principal residue is quuxite straw');
SELECT tests.kg_mention(:quux, tests.chunk('g-b', 1), 'quuxite straw');
SELECT tests.kg_mention(:frob, tests.chunk('g-b', 1), 'frobium content');
SELECT tests.kg_edge(:quux, :frob, 'HAS_PROPERTY', tests.chunk('g-b', 1), 0.7);
SELECT tests.kg_mention(:frob, tests.chunk('g-c', 1), 'frobium content');
-- restricted: an alias surface of Zorblat, an edge to secretite, a hop candidate, a restricted-only entity
SELECT tests.kg_mention(:zorblat, tests.chunk('g-r', 1), 'Zorb Co');
SELECT tests.kg_mention(:secr, tests.chunk('g-r', 1), 'secretite');
SELECT tests.kg_edge(:zorblat, :secr, 'NEAR', tests.chunk('g-r', 1), 1.0);
SELECT tests.kg_mention(:quux, tests.chunk('g-r', 2), 'quuxite straw');
SELECT tests.kg_mention(:hx, tests.chunk('g-r', 3), 'hxsecret');
SELECT tests.kg_mention(:secr, tests.chunk('g-p', 1), 'secretite');
-- excluded document: the only edge to glimmerine, the only mention of excludium
SELECT tests.kg_mention(:quux, tests.chunk('g-x', 1), 'quuxite straw');
SELECT tests.kg_mention(:glim, tests.chunk('g-x', 1), 'glimmerine');
SELECT tests.kg_mention(:excl, tests.chunk('g-x', 1), 'excludium');
SELECT tests.kg_edge(:quux, :glim, 'WITH', tests.chunk('g-x', 1));
SELECT tests.kg_mention(:glim, tests.chunk('g-g', 1), 'glimmerine');
-- retracted document: the only edge to tarnite
SELECT tests.kg_mention(:quux, tests.chunk('g-t', 1), 'quuxite straw');
SELECT tests.kg_edge(:quux, :tarn, 'WITH', tests.chunk('g-t', 1));
SELECT tests.kg_mention(:tarn, tests.chunk('g-tt', 1), 'tarnite');
-- another source: the only edge to sourcite
SELECT tests.kg_mention(:quux, tests.chunk('g-s', 1), 'quuxite straw');
SELECT tests.kg_edge(:quux, :sourc, 'WITH', tests.chunk('g-s', 1));
SELECT tests.kg_mention(:sourc, tests.chunk('g-ss', 1), 'sourcite');
-- open_commercial: an edge and a mention
SELECT tests.kg_mention(:comm, tests.chunk('g-o', 1), 'commite');
SELECT tests.kg_edge(:quux, :comm, 'WITH', tests.chunk('g-o', 1));
-- citations from g-a to a public and a restricted document (resolved)
INSERT INTO scirag.document_citations (chunk_id, cited_doi, cited_document_id)
SELECT tests.chunk('g-a', 1), '10.0000/' || e, (SELECT document_id FROM tests.fx WHERE external_id = e LIMIT 1)
FROM unnest(ARRAY['g-cite', 'g-cite-r']) AS e;

\set q '''What does Zorblat County hold?'''

-- ---------------------------------------------------------------- the scoped walk
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.licenses = 'public';
SET LOCAL scirag.sources = 'src_main';
SET LOCAL scirag.exclude_documents = :'doc_x';
SET LOCAL scirag.exclude_retracted = 'on';

SELECT is(tests.graph_hits(:q), ARRAY['g-a:1', 'g-b:1', 'g-c:1'],
  'scoped walk: exactly the seed''s evidence (hop 0), the neighbour''s (hop 1) and the next (hop 2)');
SELECT results_eq(
  $$SELECT f.external_id, g.hops, g.rank FROM scirag.search_graph('What does Zorblat County hold?', 100) g
    JOIN tests.fx f ON f.chunk_id = g.chunk_id ORDER BY g.rank$$,
  $$VALUES ('g-a', 0, 1), ('g-b', 1, 2), ('g-c', 2, 3)$$,
  'hops and 1-based ranks, ordered by hop distance');
SELECT is((SELECT count(*)::int FROM scirag.search_graph(:q, 2)), 2, 'at most n rows');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-r:1', 'g-r:2', 'g-r:3'], 'no restricted chunk is a candidate');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-x:1'], 'the excluded document is not a candidate');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-g:1'], 'an edge stated only in the excluded document does not extend the walk (hop)');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-p:1'], 'an edge stated only in restricted text does not extend the walk');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-tt:1'], 'an edge stated only in a retracted document does not extend the walk');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-ss:1', 'g-s:1'], 'edges and chunks of another source are not used');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-o:1'], 'edges and chunks outside the license scope are not used');

-- seeding
SELECT is(tests.graph_hits('Tell me about excludium'), '{}'::text[], 'the excluded document cannot seed (its only entity)');
SELECT is((SELECT count(*)::int FROM scirag.graph_seed_entities('What is near Zorb Co?')), 0,
  'alias seeding: a surface seen only in restricted text does not seed');
SELECT is(tests.graph_hits('What is near Zorb Co?'), '{}'::text[], 'alias seeding: nothing is walked from a restricted alias');
SELECT is((SELECT count(*)::int FROM scirag.graph_seed_entities('hxsecret')), 0, 'a restricted-only entity cannot seed');
SELECT is((SELECT array_agg(entity_id) FROM scirag.graph_seed_entities(:q)), ARRAY[:zorblat::bigint],
  'a visible surface seeds its entity');
SELECT is((SELECT array_agg(entity_id) FROM scirag.graph_seed_entities('zorblat county? ZORBLAT COUNTY')), ARRAY[:zorblat::bigint],
  'the offline matcher ignores case and punctuation for ordinary names');

-- what a reader sees of the graph tables
SELECT is((SELECT count(*)::int FROM scirag.kg_entities WHERE name = 'hxsecret'), 0, 'an entity with only restricted evidence is invisible');
SELECT is((SELECT count(*)::int FROM scirag.kg_entities WHERE id = :secr), 1, 'an entity with visible evidence is visible');
SELECT is((SELECT count(*)::int FROM scirag.kg_relationships WHERE source_entity_id = :zorblat OR target_entity_id = :zorblat), 1,
  'only relationships with eligible provenance are visible');
SELECT throws_ok('SELECT aliases FROM scirag.kg_entities', '42501', NULL, 'a reader cannot read the alias lists');
SELECT throws_ok('SELECT 1 FROM scirag.entity_resolution_audit', '42501', NULL, 'a reader cannot read merge receipts');
SELECT is((SELECT array_agg(r.resolved ORDER BY r.cited_doi) FROM scirag.references((SELECT document_id FROM tests.fx WHERE external_id = 'g-a' LIMIT 1)) r), ARRAY[true, false],
  'a citation naming a document outside the scope is unresolved (like a DOI not in the corpus)');

-- empty scope fails closed
SET LOCAL scirag.licenses = '';
SELECT is((SELECT count(*)::int FROM scirag.search_graph(:q, 10)), 0, 'an empty license list returns nothing');
SET LOCAL scirag.licenses = 'public';

-- ---------------------------------------------------------------- controls: the same evidence when the scope admits it
SET LOCAL scirag.exclude_documents = '';
SELECT ok(tests.graph_hits(:q) @> ARRAY['g-x:1', 'g-g:1'], 'control: without the exclusion the document is a hop and a candidate');
SELECT ok(tests.graph_hits('Tell me about excludium') @> ARRAY['g-x:1'], 'control: without the exclusion it seeds');
SET LOCAL scirag.exclude_retracted = 'off';
SELECT ok(tests.graph_hits(:q) @> ARRAY['g-tt:1'], 'control: without exclude_retracted the retracted edge is walked');
SET LOCAL scirag.sources = '';
SELECT ok(tests.graph_hits(:q) @> ARRAY['g-ss:1', 'g-s:1'], 'control: with any source the other source is walked');
SET LOCAL scirag.licenses = 'public,open_commercial';
SELECT ok(tests.graph_hits(:q) @> ARRAY['g-o:1'], 'control: with open_commercial its edge is walked');
SELECT tests.as_role('scirag_loader');
-- through the reader API (policies/reader_wall) the loader gets its session scope: ask for every class
SET LOCAL scirag.licenses = 'public,open_commercial,open_noncommercial,restricted,unknown';
SELECT ok(tests.graph_hits(:q) @> ARRAY['g-p:1', 'g-r:2'], 'control: the loader (unrestricted) walks the restricted edge');
SELECT is((SELECT array_agg(entity_id) FROM scirag.graph_seed_entities('What is near Zorb Co?')), ARRAY[:zorblat::bigint],
  'control: the loader seeds from the restricted alias');

-- ---------------------------------------------------------------- options
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.licenses = 'public';
SET LOCAL scirag.sources = 'src_main';
SET LOCAL scirag.exclude_documents = :'doc_x';
SET LOCAL scirag.exclude_retracted = 'on';
SET LOCAL scirag.graph_min_confidence = '1.0';
SELECT is(tests.graph_hits(:q), ARRAY['g-a:1', 'g-b:1'], 'min_confidence 1.0: the 0.7 edge is not walked');
SET LOCAL scirag.graph_min_confidence = '';
SET LOCAL scirag.graph_rank_by = 'confidence';
SELECT results_eq(
  $$SELECT f.external_id, g.confidence FROM scirag.search_graph('What does Zorblat County hold?', 100) g
    JOIN tests.fx f ON f.chunk_id = g.chunk_id ORDER BY g.rank$$,
  $$VALUES ('g-a', 1.0::float8), ('g-b', 1.0::float8), ('g-c', 0.7::float8)$$,
  'rank_by confidence: the strongest minimum-edge confidence along the path');
SET LOCAL scirag.graph_rank_by = 'hops';
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-cite:1'], 'the citation hop is off by default');
SET LOCAL scirag.graph_citation_hop = 'on';
SELECT ok(tests.graph_hits(:q) @> ARRAY['g-cite:1'], 'citation_hop on: a resolved citation brings the cited document');
SELECT ok(NOT tests.graph_hits(:q) && ARRAY['g-cite-r:1'], 'citation_hop: scope applies to the neighbouring document');
SET LOCAL scirag.graph_citation_hop = 'off';

-- positive filters (scirag.documents): only admitted documents seed, extend or supply the walk
SET LOCAL scirag.documents = 'g-a,g-b';
SELECT is(tests.graph_hits(:q), ARRAY['g-a:1', 'g-b:1'], 'documents g-a,g-b: the walk stops at the admitted documents');
SET LOCAL scirag.documents = 'g-a,g-c';
SELECT is(tests.graph_hits(:q), ARRAY['g-a:1'], 'documents g-a,g-c: an edge stated only in a document outside the filter does not extend the walk');
SET LOCAL scirag.years = '2023';
SELECT is(tests.graph_hits(:q), '{}'::text[], 'years 2023 (the fixtures are of 2024): nothing seeds');
RESET scirag.documents;
RESET scirag.years;

-- ---------------------------------------------------------------- the hub bound
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('g-hub', 'public', 'src_main',
  (SELECT array_agg('hubbium note ' || i ORDER BY i) FROM generate_series(1, 60) i), with_section => false);
SELECT tests.kg_entity('hubbium', 'Product') AS hub \gset
SELECT tests.kg_mention(:hub, tests.chunk('g-hub', i), 'hubbium') FROM generate_series(1, 60) i;
SELECT tests.kg_mention(tests.kg_entity('spoke ' || i, 'Product'), tests.chunk('g-hub', i), 'spoke ' || i)
FROM generate_series(1, 60) i;
SELECT tests.kg_edge(:hub, tests.kg_entity('spoke ' || i, 'Product'), 'WITH', tests.chunk('g-hub', i))
FROM generate_series(1, 60) i;
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.graph_max_fanout = '5';
SET LOCAL scirag.graph_mentions_per_entity = '7';
SELECT is((SELECT count(*)::int FROM scirag.search_graph('hubbium', 1000) WHERE hops = 0), 7,
  'hub seed: at most mentions_per_entity evidence chunks per entity');
SELECT cmp_ok((SELECT count(DISTINCT e.entity_id)::int FROM scirag.search_graph('hubbium', 1000) g
               JOIN scirag.kg_mentions e ON e.chunk_id = g.chunk_id WHERE e.surface LIKE 'spoke %'), '<=', 12,
  'hub seed: only max_fanout neighbours per hop are followed (5 spokes, plus spokes sharing the 7 hub chunks)');
SET LOCAL scirag.graph_max_fanout = '100000';
SET LOCAL scirag.graph_mentions_per_entity = '100000';
SELECT cmp_ok((SELECT count(*)::int FROM scirag.search_graph('hubbium', 1000)), '<=', 500,
  'a session cannot lift the bounds past their hard caps (mentions per entity clamped to 500)');
SELECT is((SELECT count(*)::int FROM scirag.search_graph('hubbium', 1000) WHERE hops = 0), 60,
  'within the caps every evidence chunk of the seed is used');

SELECT * FROM finish();
ROLLBACK;
