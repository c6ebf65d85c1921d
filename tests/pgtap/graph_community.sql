-- The community layer under scope (docs/threat-model.md): a summary is visible
-- exactly when every one of its source documents is in the caller's scope,
-- enforced by row-level security, and stays so when a document's license,
-- retraction or existence changes.
BEGIN;
SELECT plan(23);
\ir helpers/fixtures.psql
\ir helpers/graph_fixtures.psql
-- this suite tests the graph policies themselves: readers may SELECT here, inside this
-- transaction only, what the reader API may (policies/reader_wall)
SELECT tests.open_evidence_to('scirag_reader') AS _ \gset

-- ---------------------------------------------------------------- fixtures
CREATE TABLE tests.cq AS SELECT tests.frame_vec(0) AS q;
GRANT SELECT ON tests.cq TO PUBLIC;
SELECT q::text AS q FROM tests.cq \gset
SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('c-pub', 'public', 'src_main', ARRAY['public evidence'],
  ARRAY[tests.fvec(30, 0, 0)], with_section => false) AS d_pub \gset
SELECT tests.add_doc('c-oc', 'open_commercial', 'src_main', ARRAY['open commercial evidence'],
  ARRAY[tests.fvec(31, 90, 0)], with_section => false) AS d_oc \gset
SELECT tests.add_doc('c-res', 'restricted', 'src_main', ARRAY['restricted evidence'],
  ARRAY[tests.fvec(2, 0, 0)], with_section => false) AS d_res \gset
SELECT tests.add_doc('c-pub2', 'public', 'src_main', ARRAY['more public evidence'],
  ARRAY[tests.fvec(32, 180, 0)], with_section => false) AS d_pub2 \gset

-- K2 is the nearest summary but has one restricted source; K0 is a narrower tier.
SELECT tests.kg_community(2, 1, ARRAY[:d_pub, :d_oc]::bigint[], 'K1 summary', tests.fvec(5, 0, 0),
  ARRAY[tests.chunk('c-pub', 1), tests.chunk('c-oc', 1)]) AS k1 \gset
SELECT tests.kg_community(2, 2, ARRAY[:d_pub, :d_res]::bigint[], 'K2 summary', tests.fvec(1, 0, 0),
  ARRAY[tests.chunk('c-pub', 1), tests.chunk('c-res', 1)]) AS k2 \gset
SELECT tests.kg_community(2, 3, ARRAY[:d_pub2, :d_oc]::bigint[], 'K3 summary', tests.fvec(10, 0, 0),
  ARRAY[tests.chunk('c-pub2', 1)]) AS k3 \gset
SELECT tests.kg_community(1, 4, ARRAY[:d_pub2]::bigint[], 'K0 summary', tests.fvec(15, 0, 0),
  ARRAY[tests.chunk('c-pub2', 1)]) AS k0 \gset
INSERT INTO scirag.kg_community_members (community_id, entity_id, degree)
VALUES (:k2, tests.kg_entity('restricted theme', 'Thing'), 1.0);

-- a role whose ceiling covers restricted documents too
SELECT tests.as_role(NULL);
SELECT tests.login_role('wide') AS wide \gset
SELECT tests.grant_like('scirag_reader', :'wide');
INSERT INTO scirag.role_ceilings (role_name, licenses, note)
VALUES (:'wide', ARRAY['public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown'], 'test');

-- ---------------------------------------------------------------- visibility
SELECT tests.as_role('scirag_reader');
SELECT results_eq(
  format($$SELECT community_id, rank FROM scirag.search_community(%L::public.vector, 10)$$, :'q'),
  format($$VALUES (%s::bigint, 1), (%s::bigint, 2)$$, :k1, :k3),
  'default scope: the communities whose every source is in scope, nearest first; never the one with a restricted source');
SELECT is((SELECT document_ids FROM scirag.search_community(:'q'::public.vector, 10) WHERE rank = 1),
  ARRAY[:d_pub, :d_oc]::bigint[], 'document_ids are the community''s source documents');
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id = :k2), 0,
  'a community with one out-of-scope source is invisible to the caller');
SELECT is((SELECT count(*)::int FROM scirag.kg_community_chunks WHERE community_id = :k2), 0,
  'so are its evidence rows, even where the chunk itself is visible');
SELECT is((SELECT count(*)::int FROM scirag.kg_community_members WHERE community_id = :k2), 0,
  'and its members');
SELECT set_eq(
  format($$SELECT chunk_id FROM scirag.search_community_chunks(%L::public.vector, 100)$$, :'q'),
  format($$VALUES (%s::bigint), (%s::bigint), (%s::bigint)$$, tests.chunk('c-pub', 1), tests.chunk('c-oc', 1), tests.chunk('c-pub2', 1)),
  'search_community_chunks: the evidence chunks of visible communities only');
SELECT results_eq(
  format($$SELECT rank FROM scirag.search_community_chunks(%L::public.vector, 100)$$, :'q'),
  $$VALUES (1), (2), (3)$$, 'community chunks ranked 1..n');
SELECT is((SELECT chunk_id FROM scirag.search_community_chunks(:'q'::public.vector, 100) WHERE rank = 3),
  tests.chunk('c-pub2', 1), 'chunks of the first community come before those of the second');

SET LOCAL scirag.licenses = 'public';
SELECT results_eq(
  format($$SELECT community_id FROM scirag.search_community(%L::public.vector, 10)$$, :'q'),
  format($$VALUES (%s::bigint)$$, :k0),
  'a narrower scope falls back to the broadest tier it can see fully');
SET LOCAL scirag.licenses = '';
SELECT is((SELECT count(*)::int FROM scirag.search_community(:'q'::public.vector, 10)), 0, 'an empty scope sees no summary');
RESET scirag.licenses;

SELECT throws_ok($$INSERT INTO scirag.kg_communities (tier, tier_licenses, label, title, summary, summary_method,
  entity_count, relationship_count, source_documents, licenses, sources, any_retracted)
  VALUES (9, '{public}', 9, 't', 's', 'm', 1, 1, '{1}', '{public}', '{src_main}', false)$$,
  '42501', NULL, 'a reader cannot write communities');

-- a caller whose scope covers every source sees it
SELECT tests.as_role(:'wide');
SET LOCAL scirag.licenses = 'public,open_commercial';
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id = :k2), 0,
  'control: the wide role with a scope that leaves out restricted does not see it');
SET LOCAL scirag.licenses = 'public,open_commercial,restricted';
SELECT is((SELECT community_id FROM scirag.search_community(:'q'::public.vector, 10) WHERE rank = 1), :k2::bigint,
  'a caller whose scope covers all its sources sees it (and it ranks first)');
SELECT is((SELECT count(*)::int FROM scirag.kg_community_members WHERE community_id = :k2), 1,
  'with its members');

-- exclusions
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.exclude_documents = :'d_oc';
SELECT results_eq(
  format($$SELECT community_id FROM scirag.search_community(%L::public.vector, 10)$$, :'q'),
  format($$VALUES (%s::bigint)$$, :k0),
  'excluding one source document hides every community built from it');
RESET scirag.exclude_documents;

-- ---------------------------------------------------------------- changes to a source document
SELECT tests.as_role('scirag_loader');
UPDATE scirag.documents SET retracted = true WHERE id = :d_oc;
SELECT tests.as_role('scirag_reader');
SELECT is((SELECT any_retracted FROM scirag.kg_communities WHERE id = :k1), true,
  'a retraction discovered later is copied to the communities built from the document');
SET LOCAL scirag.exclude_retracted = on;
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id IN (:k1, :k3)), 0,
  'exclude_retracted hides communities with a retracted source');
SET LOCAL scirag.exclude_retracted = off;
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id IN (:k1, :k3)), 2,
  'control: without exclude_retracted they are visible');

SELECT tests.as_role('scirag_loader');
UPDATE scirag.documents SET license = 'restricted' WHERE id = :d_oc;
SELECT tests.as_role('scirag_reader');
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id IN (:k1, :k3)), 0,
  'a source re-licensed as restricted hides the communities built from it');
SELECT is((SELECT licenses FROM scirag.kg_communities WHERE id = :k1), NULL::text[],
  '(the reader cannot even read the community row)');

SELECT tests.as_role('scirag_loader');
SELECT is((SELECT licenses FROM scirag.kg_communities WHERE id = :k1), ARRAY['public', 'restricted'],
  'the license set follows the document');
DELETE FROM scirag.documents WHERE id = :d_res;
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id = :k2), 0,
  'deleting a source document deletes the communities built from it');
SELECT is((SELECT count(*)::int FROM scirag.kg_communities WHERE id IN (:k0, :k1, :k3)), 3,
  'and only those');

SELECT * FROM finish();
ROLLBACK;
