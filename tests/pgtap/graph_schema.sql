-- Graph tables and the question matcher: scope columns always come from the
-- evidence chunk and follow its document; entity names show only through
-- visible evidence; the offline matcher's surface rules.
BEGIN;
SELECT plan(20);
\ir helpers/fixtures.psql
\ir helpers/graph_fixtures.psql
-- this suite tests the graph policies themselves: readers may SELECT here, inside this
-- transaction only, what the reader API may (policies/reader_wall)
SELECT tests.open_evidence_to('scirag_reader') AS _ \gset

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('s-pub', 'public', 'src_main', ARRAY['corn stover and corn, VS 93 %.', 'maize stover notes.'],
  with_section => false) AS d_pub \gset
SELECT tests.add_doc('s-res', 'restricted', 'src_main', ARRAY['restricted corn stover.'], with_section => false) AS d_res \gset

-- ---------------------------------------------------------------- scope columns
INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id, document_id, license, source, retracted)
VALUES (tests.kg_entity('corn stover', 'Residue', true), tests.chunk('s-res', 1), 'corn stover',
        tests.kg_entity('corn stover', 'Residue', true), :d_pub, 'public', 'src_main', false);
SELECT results_eq(
  format($$SELECT document_id, license::text FROM scirag.kg_mentions WHERE chunk_id = %s$$, tests.chunk('s-res', 1)),
  format($$VALUES (%s::bigint, 'restricted')$$, :d_res),
  'a writer cannot file evidence under another document or a wider license: the chunk''s scope wins');
SELECT tests.kg_mention(tests.kg_entity('corn stover', 'Residue', true), tests.chunk('s-pub', 1), 'corn stover');
SELECT tests.kg_mention(tests.kg_entity('corn', 'Crop', true), tests.chunk('s-pub', 1), 'corn');
SELECT tests.kg_mention(tests.kg_entity('volatile solids', 'Property', true), tests.chunk('s-pub', 1), 'VS');
SELECT tests.kg_edge(tests.kg_entity('corn', 'Crop', true), tests.kg_entity('corn stover', 'Residue', true),
                     'PRODUCES', tests.chunk('s-pub', 1), 0.7);
SELECT throws_ok(format($$SELECT tests.kg_edge(%s, %s, 'PRODUCES', %s, 0.5)$$, tests.kg_entity('corn', 'Crop'),
                        tests.kg_entity('corn stover', 'Residue'), tests.chunk('s-pub', 1)),
  '23514', NULL, 'confidence is one of 1.0, 0.7, 0.4');
SELECT throws_ok(format($$SELECT tests.kg_edge(%s, %s, 'SELF', %s)$$, tests.kg_entity('corn', 'Crop'),
                        tests.kg_entity('corn', 'Crop'), tests.chunk('s-pub', 1)),
  '23514', NULL, 'an entity has no edge to itself');
SELECT throws_ok(format($$SELECT tests.kg_edge(%s, %s, 'PRODUCES', %s, 1.0)$$, tests.kg_entity('corn', 'Crop'),
                        tests.kg_entity('corn stover', 'Residue'), tests.chunk('s-pub', 1)),
  '23505', NULL, 'one row per (type, source, target, evidence chunk)');
INSERT INTO scirag.document_citations (chunk_id, cited_doi) VALUES (tests.chunk('s-pub', 1), '10.0000/elsewhere');

UPDATE scirag.documents SET license = 'open_noncommercial', retracted = true WHERE id = :d_pub;
SELECT is((SELECT array_agg(DISTINCT license::text || '/' || retracted) FROM scirag.kg_mentions WHERE document_id = :d_pub),
  ARRAY['open_noncommercial/true'], 'a document''s new license and retraction reach its mentions');
SELECT is((SELECT array_agg(DISTINCT license::text || '/' || retracted) FROM scirag.kg_relationships WHERE document_id = :d_pub),
  ARRAY['open_noncommercial/true'], '... its relationships');
SELECT is((SELECT array_agg(DISTINCT license::text || '/' || retracted) FROM scirag.document_citations WHERE document_id = :d_pub),
  ARRAY['open_noncommercial/true'], '... and its citations');
UPDATE scirag.documents SET license = 'public', retracted = false WHERE id = :d_pub;

-- ---------------------------------------------------------------- entity visibility
SELECT tests.kg_entity('Maize Stover Undeclared', 'Residue') AS undeclared \gset
SELECT tests.kg_mention(:undeclared, tests.chunk('s-pub', 2), 'maize stover');
SELECT tests.kg_entity('stover tombstone', 'Residue') AS tomb \gset
UPDATE scirag.kg_entities SET canonical_entity_id = tests.kg_entity('corn stover', 'Residue'), merged_at = now() WHERE id = :tomb;
INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id)
VALUES (tests.kg_entity('corn stover', 'Residue'), tests.chunk('s-pub', 2), 'stover tombstone', :tomb);
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.licenses = 'public';
SELECT is((SELECT count(*)::int FROM scirag.kg_entities WHERE id = :undeclared), 0,
  'an undeclared name that no visible evidence writes stays hidden (its evidence is visible under another surface)');
SELECT is((SELECT count(*)::int FROM scirag.kg_entities WHERE name IN ('corn stover', 'corn', 'volatile solids')), 3,
  'declared entities with visible evidence are visible');
SELECT is((SELECT canonical_entity_id FROM scirag.kg_entities WHERE id = :tomb), tests.kg_entity('corn stover', 'Residue'),
  'a tombstone is judged by its original evidence pointers and names its survivor');

-- ---------------------------------------------------------------- the offline question matcher
SELECT is((SELECT array_agg(e.name ORDER BY e.name) FROM scirag.graph_seed_entities('how much corn stover is there?') s
           JOIN scirag.kg_entities e ON e.id = s.entity_id), ARRAY['corn stover'],
  'longest match: "corn stover" does not also seed "corn"');
SELECT is((SELECT array_agg(e.name ORDER BY e.name) FROM scirag.graph_seed_entities('corn versus wheat') s
           JOIN scirag.kg_entities e ON e.id = s.entity_id), ARRAY['corn'], 'a single word seeds its entity');
SELECT is((SELECT count(*)::int FROM scirag.graph_seed_entities('corn stover vs wheat straw') s
           JOIN scirag.kg_entities e ON e.id = s.entity_id WHERE e.name = 'volatile solids'), 0,
  'an acronym surface (VS) does not seed from the word "vs"');
SELECT is((SELECT count(*)::int FROM scirag.graph_seed_entities('VS of corn stover') s
           JOIN scirag.kg_entities e ON e.id = s.entity_id WHERE e.name = 'volatile solids'), 1,
  'it seeds when the question writes it in capitals');
SELECT is((SELECT array_agg(e.name) FROM scirag.graph_seed_entities('the stover tombstone') s
           JOIN scirag.kg_entities e ON e.id = s.entity_id), ARRAY['corn stover'],
  'a tombstone name written in visible evidence seeds its survivor');
SELECT is(scirag.kg_normalize('Emission  Factors (PM2.5)'), 'emission factor pm2 5', 'kg_normalize: case, punctuation, plural');
SELECT is(scirag.kg_normalize('glass'), 'glass', 'kg_normalize keeps a double s');

-- ---------------------------------------------------------------- function properties
-- (the reader API runs as scirag_api, under the caller's row-level security: policies/reader_wall)
SELECT is_empty($$SELECT p.oid::regprocedure FROM pg_proc p
  WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef
    AND NOT (p.proowner = 'scirag_api'::regrole AND p.proname = ANY (scirag.reader_wall_functions()))
    AND p.proname IN ('search_graph', 'graph_seed_entities', 'search_community',
                      'search_community_chunks', 'graph_question_entities')$$,
  'the graph and community functions are SECURITY INVOKER or reader API functions');
SELECT is_empty($$SELECT p.oid::regprocedure FROM pg_proc p
  WHERE p.pronamespace = 'scirag'::regnamespace
    AND (p.proname LIKE 'kg\_%' OR p.proname LIKE 'graph\_%' OR p.proname IN ('search_graph', 'search_community', 'search_community_chunks'))
    AND has_function_privilege('public', p.oid, 'EXECUTE')$$,
  'PUBLIC cannot execute the graph functions');
SELECT is_empty($$SELECT 1 FROM scirag.search_graph(NULL, 10) UNION ALL SELECT 1 FROM scirag.search_graph('corn', 0)$$,
  'a NULL question or n = 0 returns nothing');

SELECT * FROM finish();
ROLLBACK;
