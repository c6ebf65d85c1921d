-- Crossref citations (schema/crossref_citations) and the reader functions
-- scirag.references / scirag.cited_by (functions/citations): a chunk-less citation
-- takes its scope from the citing document, follows its retraction, and readers see
-- citation links only inside their scope.
BEGIN;
SELECT plan(12);
\ir helpers/fixtures.psql

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('c-pub', 'public', 'src_main', ARRAY['public text citing others.'], with_section => false) AS d_pub \gset
SELECT tests.add_doc('c-res', 'restricted', 'src_main', ARRAY['restricted text.'], with_section => false) AS d_res \gset
SELECT tests.add_doc('c-cited', 'public', 'src_main', ARRAY['the cited public paper.'], with_section => false) AS d_cited \gset
UPDATE scirag.documents SET doi = '10.5555/PGTAP.CITED' WHERE id = :d_cited;

INSERT INTO scirag.document_citations (document_id, cited_doi, origin, license, source)
VALUES (:d_pub, '10.5555/pgtap.cited', 'crossref', 'restricted', 'elsewhere'),
       (:d_pub, '10.5555/pgtap.nowhere', 'crossref', 'public', 'src_main'),
       (:d_res, '10.5555/pgtap.cited', 'crossref', 'public', 'src_main');
UPDATE scirag.document_citations c SET cited_document_id = d.id FROM scirag.documents d
WHERE lower(d.doi) = c.cited_doi;

SELECT results_eq(
  format($$SELECT license::text, source FROM scirag.document_citations WHERE document_id = %s AND cited_doi = '10.5555/pgtap.cited'$$, :d_pub),
  $$VALUES ('public', 'src_main')$$,
  'a chunk-less citation takes license and source from its citing document, whatever the writer passed');
SELECT throws_ok($$INSERT INTO scirag.document_citations (document_id, cited_doi, origin) VALUES (-1, '10.5555/x', 'crossref')$$,
  'P0001', NULL, 'a chunk-less citation needs an existing citing document');
SELECT throws_ok(format($$INSERT INTO scirag.document_citations (document_id, cited_doi) VALUES (%s, '10.5555/y')$$, :d_pub),
  '23514', NULL, 'a text citation (the default origin) needs its chunk');
UPDATE scirag.documents SET retracted = true WHERE id = :d_pub;
SELECT is((SELECT bool_and(retracted) FROM scirag.document_citations WHERE document_id = :d_pub), true,
  'a retraction of the citing document reaches its Crossref citations');
UPDATE scirag.documents SET retracted = false WHERE id = :d_pub;

SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.licenses = 'public';
SELECT results_eq(format($$SELECT cited_doi, resolved, external_id FROM scirag.references(%s)$$, :d_pub),
  $$VALUES ('10.5555/pgtap.cited'::text, true, 'c-cited'::text), ('10.5555/pgtap.nowhere', false, NULL)$$,
  'references: resolved first (with the corpus document), then unresolved DOIs');
SELECT results_eq(format($$SELECT external_id FROM scirag.cited_by(%s)$$, :d_cited),
  $$VALUES ('c-pub'::text)$$, 'cited_by: only citing documents in scope (the restricted one is hidden)');
SELECT is((SELECT count(*)::int FROM scirag.references(:d_res)), 0, 'references of an out-of-scope document: nothing');

SET LOCAL scirag.licenses = 'public,restricted';
SELECT results_eq(format($$SELECT external_id FROM scirag.cited_by(%s)$$, :d_cited), $$VALUES ('c-pub'::text)$$,
  'the reader''s ceiling still hides the restricted citing document when the session asks for it');

SET LOCAL scirag.licenses = 'public';
SET LOCAL scirag.exclude_documents = 'c-cited';
SELECT is((SELECT count(*)::int FROM scirag.references(:d_pub) WHERE resolved), 0,
  'an excluded cited document takes its resolved citation out of view');
SELECT is((SELECT count(*)::int FROM scirag.cited_by(:d_cited)), 0, 'and cited_by of it shows nothing');
RESET scirag.exclude_documents;

SET LOCAL scirag.exclude_retracted = 'on';
SELECT tests.as_role(NULL);
UPDATE scirag.documents SET retracted = true WHERE id = :d_pub;
SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.licenses = 'public';
SET LOCAL scirag.exclude_retracted = 'on';
SELECT is((SELECT count(*)::int FROM scirag.cited_by(:d_cited)), 0,
  'with exclude_retracted on, a retracted citing document drops out of cited_by');
SET LOCAL scirag.exclude_retracted = 'off';
SELECT is((SELECT count(*)::int FROM scirag.cited_by(:d_cited)), 1, '... and is back with it off');

SELECT * FROM finish();
ROLLBACK;
