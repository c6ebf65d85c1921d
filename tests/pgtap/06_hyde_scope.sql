-- The HyDE layer (offline pseudo-relevance feedback) builds its probe passage only
-- from text the caller may see, and search_hyde ranks only in-scope chunks.
BEGIN;
SELECT plan(6);
\ir helpers/fixtures.psql

SELECT tests.as_role('scirag_loader');
SELECT tests.add_doc('hy-pub', 'public', 'fixture',
  ARRAY['Quokka pellets were densified at twelve percent moisture with good durability and low fines.',
        'Quokka pellet durability rose with conditioning steam in the pilot mill trials.'], tag => 'pub');
SELECT tests.add_doc('hy-secret', 'restricted', 'fixture',
  ARRAY['Quokka pellets bind best with the zanthoxylum binder blend at nine percent loading.',
        'The zanthoxylum binder blend is proprietary to the sponsor of this quokka pellet study.'], tag => 'secret');
SELECT tests.as_role('scirag_reader');

SELECT ok(scirag.hyde_passage('quokka pellet binder') LIKE '%quokka%' OR scirag.hyde_passage('quokka pellet binder') LIKE '%Quokka%',
  'the offline HyDE passage is built from the keyword hits the reader can see');
SELECT ok(position('zanthoxylum' IN lower(scirag.hyde_passage('quokka pellet binder blend'))) = 0,
  'a restricted document''s words never reach the reader''s HyDE passage');
SELECT is((SELECT count(*) FROM scirag.search_hyde('quokka pellet binder blend', 10) h
           JOIN tests.fx f ON f.chunk_id = h.chunk_id WHERE f.tag = 'secret'), 0::bigint,
  'search_hyde returns no restricted chunk to the reader');

SELECT tests.as_role('scirag_loader');
-- through the reader API (policies/reader_wall) the loader gets its session scope: ask for restricted
SET LOCAL scirag.licenses = 'public, open_commercial, restricted';
SELECT ok(position('zanthoxylum' IN lower(scirag.hyde_passage('quokka pellet binder blend'))) > 0,
  'the loader, whose scope covers restricted text, gets it in its passage (the test can fail)');
RESET scirag.licenses;

SELECT tests.as_role('scirag_reader');
SET LOCAL scirag.exclude_documents = 'hy-pub';
SELECT is((SELECT count(*) FROM scirag.search_hyde('quokka pellet binder blend', 10) h
           JOIN tests.fx f ON f.chunk_id = h.chunk_id), 0::bigint,
  'with its only visible document excluded, the reader''s HyDE layer finds no fixture chunk');
SET LOCAL scirag.exclude_documents = '';
SELECT ok((SELECT count(*) FROM scirag.retrieve('quokka pellet binder blend', 5, 'deep',
             '{"layers": ["hyde"]}') r JOIN tests.fx f ON f.chunk_id = r.chunk_id WHERE f.tag = 'secret') = 0
          AND scirag.last_trace()->'stages' @> '[{"stage": "hyde", "status": "ok"}]',
  'through retrieve the hyde stage runs and brings no restricted chunk');

SELECT * FROM finish();
ROLLBACK;
