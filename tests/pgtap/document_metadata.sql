-- documents.metadata_inferred and arxiv_id (schema/document_metadata, issue 17): the
-- column names only citation fields, defaults to "nothing guessed", and a reader sees
-- it like any other citation column (inside its scope only).
BEGIN;
SELECT plan(7);

SELECT has_column('scirag', 'documents', 'arxiv_id', 'documents.arxiv_id exists');
SELECT col_type_is('scirag', 'documents', 'metadata_inferred', 'text[]', 'metadata_inferred is text[]');
SELECT col_not_null('scirag', 'documents', 'metadata_inferred', 'metadata_inferred is never NULL');

INSERT INTO scirag.documents (external_id, title, content_hash, license, metadata_inferred, arxiv_id)
VALUES ('md-guessed', 'Guessed Title', 'md-hash-1', 'public', '{title,authors,doi,arxiv_id}', '2107.05407');
INSERT INTO scirag.documents (external_id, title, content_hash, license)
VALUES ('md-stated', 'Stated Title', 'md-hash-2', 'public');

SELECT is((SELECT metadata_inferred FROM scirag.documents WHERE external_id = 'md-stated'), '{}'::text[],
          'a document stored without guesses has an empty list');
SELECT throws_ok(
  $$INSERT INTO scirag.documents (external_id, title, content_hash, metadata_inferred)
    VALUES ('md-bad', 'x', 'md-hash-3', '{title,license}')$$,
  '23514', NULL, 'metadata_inferred may not name a non-citation field (license)');

SET LOCAL ROLE scirag_reader;
-- readers read documents through the reader API (policies/reader_wall)
SELECT results_eq(
  $$SELECT metadata_inferred, arxiv_id FROM scirag.documents_visible('md-guessed')$$,
  $$VALUES ('{title,authors,doi,arxiv_id}'::text[], '2107.05407'::text)$$,
  'a reader sees which fields were guessed');
SET LOCAL scirag.licenses = '';
SELECT is_empty($$SELECT 1 FROM scirag.documents_visible('md-guessed')$$,
                'and nothing outside its scope');

SELECT * FROM finish();
ROLLBACK;
