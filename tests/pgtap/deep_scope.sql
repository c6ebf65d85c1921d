-- Scope holds through every deep stage (docs/threat-model.md): enrichment parents,
-- consolidation parents, merges and growth, MMR and rerank read chunks only through
-- row-level security, as the caller (SECURITY INVOKER). Restricted and excluded
-- documents are never read, and even a parent or sibling row the caller may not read
-- (a row whose scope copy differs from its document's) contributes nothing.
BEGIN;
SELECT plan(19);
\ir helpers/fixtures.psql
\ir deep_fixtures.psql

-- ---------------------------------------------------------------- definitions
SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace
      AND p.proname IN ('word_count', 'chunk_body', 'locate_text', 'text_units', 'window_text', 'enrich_chunks',
                        'enrichment_metrics', 'mmr_select', 'classify_intent', 'rerank', 'consolidate',
                        'consolidation_groups', 'consolidation_render', 'consolidation_config', 'section_chain',
                        'join_overlapping', 'covered_length', 'preset_schema', 'preset_defaults', 'preset_validate',
                        'preset_check', 'preset_get', 'preset_set', 'preset_delete', 'preset_list')
      -- the reader API runs as scirag_api, under the caller's row-level security (policies/reader_wall)
      AND ((p.prosecdef AND NOT (p.proowner = 'scirag_api'::regrole AND p.proname = ANY (scirag.reader_wall_functions())))
           OR NOT ('search_path=pg_catalog, pg_temp' = ANY (coalesce(p.proconfig, '{}'))))$$,
  'every deep-retrieval and preset function is SECURITY INVOKER or a reader API function, with search_path = pg_catalog, pg_temp');
SELECT is((SELECT count(*)::int FROM pg_proc p
           WHERE p.pronamespace = 'scirag'::regnamespace
             AND p.proname IN ('enrich_chunks', 'enrichment_metrics', 'mmr_select', 'classify_intent', 'rerank',
                               'consolidate', 'preset_get', 'preset_list')
             AND has_function_privilege('scirag_reader', p.oid, 'EXECUTE')), 8,
          'readers may execute the deep stages and read presets');

-- ---------------------------------------------------------------- fixtures (as the loader)
SELECT tests.as_role('scirag_loader');
-- In scope: a public document whose root section (ordinal 0) holds a sentence no child
-- has (PARENTSECRET) and a sibling row between p1 and p2 (SIBLINGSECRET). Those two
-- rows are then re-filed as restricted: the document is readable, they are not.
SELECT tests.deep_doc('sc-pub', 'public') AS dpub \gset
SELECT tests.deep_chunk(:dpub, 0, NULL, 'section', 'Field',
  'Field' || E'\n\n' || 'Parentonly text PARENTSECRET appears here.' || E'\n\n' || tests.words('pp', 30) || E'\n\n'
  || 'Hidden sibling SIBLINGSECRET text.' || E'\n\n' || tests.words('pq', 30), 1, 9) AS proot \gset
SELECT tests.deep_chunk(:dpub, 1, 0, 'prose', NULL, tests.words('pp', 30), 4, 5) AS p1 \gset
SELECT tests.deep_chunk(:dpub, 2, 0, 'prose', NULL, 'Hidden sibling SIBLINGSECRET text.', 6, 6) AS hid \gset
SELECT tests.deep_chunk(:dpub, 3, 0, 'prose', NULL, tests.words('pq', 30), 7, 9) AS p2 \gset
UPDATE scirag.chunks SET license = 'restricted' WHERE id IN (:proot, :hid);

-- A public document in scope, with nothing hidden.
SELECT tests.deep_doc('sc-ok', 'public') AS dok \gset
SELECT tests.deep_chunk(:dok, 0, NULL, 'section', 'Notes',
  'Notes' || E'\n\n' || tests.words('qa', 30) || E'\n\n' || tests.words('qb', 30), 1, 6, NULL) AS oroot \gset
SELECT tests.deep_chunk(:dok, 1, 0, 'prose', NULL, tests.words('qa', 30), 3, 4, tests.fvec(5)) AS q1 \gset
SELECT tests.deep_chunk(:dok, 2, 0, 'prose', NULL, tests.words('qb', 30), 5, 6, tests.fvec(10)) AS q2 \gset

-- Out of scope: a restricted document and an excluded one (both near the same vectors).
SELECT tests.deep_doc('sc-restricted', 'restricted') AS dres \gset
SELECT tests.deep_chunk(:dres, 0, NULL, 'section', 'Memo',
  'Memo' || E'\n\n' || 'Restricted RESTRICTEDSECRET one.' || E'\n\n' || 'Restricted RESTRICTEDSECRET two.', 1, 4) AS rroot \gset
SELECT tests.deep_chunk(:dres, 1, 0, 'prose', NULL, 'Restricted RESTRICTEDSECRET one.', 2, 2, tests.fvec(1)) AS r1 \gset
SELECT tests.deep_chunk(:dres, 2, 0, 'prose', NULL, 'Restricted RESTRICTEDSECRET two.', 3, 3, tests.fvec(2)) AS r2 \gset
SELECT tests.deep_doc('sc-excluded', 'public') AS dexc \gset
SELECT tests.deep_chunk(:dexc, 0, NULL, 'section', 'Holdout',
  'Holdout' || E'\n\n' || 'Excluded EXCLUDEDSECRET one.' || E'\n\n' || 'Excluded EXCLUDEDSECRET two.', 1, 4) AS xroot \gset
SELECT tests.deep_chunk(:dexc, 1, 0, 'prose', NULL, 'Excluded EXCLUDEDSECRET one.', 2, 2, tests.fvec(3)) AS x1 \gset
SELECT tests.deep_chunk(:dexc, 2, 0, 'prose', NULL, 'Excluded EXCLUDEDSECRET two.', 3, 3, tests.fvec(4)) AS x2 \gset

CREATE TEMP TABLE ids AS SELECT ARRAY[:r1, :r2, :rroot, :x1, :x2, :xroot]::bigint[] AS out_ids,
                                ARRAY[:q1, :q2, :r1, :x1, :r2, :x2]::bigint[] AS mixed;
GRANT SELECT ON ids TO PUBLIC;

-- ---------------------------------------------------------------- controls: the loader reads everything
-- (through the reader API the loader gets its session scope: ask for restricted too)
SET LOCAL scirag.licenses = 'public, open_commercial, restricted';
SELECT ok((SELECT content ~ 'PARENTSECRET' FROM scirag.enrich_chunks(ARRAY[:p1]::bigint[], 150)),
          'control: for the loader, p1 is enriched from its parent (which holds PARENTSECRET)');
SELECT ok((SELECT string_agg(content, ' ') ~ 'SIBLINGSECRET' FROM scirag.consolidate(ARRAY[:p1, :p2]::bigint[])),
          'control: for the loader, consolidating p1 + p2 pulls in the sibling between them (SIBLINGSECRET)');

-- ---------------------------------------------------------------- as a reader, with a document excluded
RESET scirag.licenses;
SELECT tests.as_role('scirag_reader');
SELECT set_config('scirag.exclude_documents', :'dexc', true) IS NOT NULL AS _ \gset

SELECT is_empty($$SELECT * FROM ids, scirag.enrich_chunks(ids.out_ids)$$,
                'enrich_chunks returns nothing for restricted or excluded chunks');
SELECT is_empty($$SELECT * FROM ids, scirag.consolidate(ids.out_ids)$$,
                'consolidate returns nothing for restricted or excluded chunks');
SELECT is_empty($$SELECT * FROM ids, scirag.mmr_select(ids.out_ids, '{1, 0.9, 0.8, 0.7, 0.6, 0.5}', 6)$$,
                'mmr_select returns nothing for restricted or excluded chunks');
SELECT is_empty($$SELECT * FROM ids, scirag.rerank('q', ids.out_ids, '{a,b,c,d,e,f}')$$,
                'rerank returns nothing for restricted or excluded chunks');
SELECT is(ARRAY(SELECT chunk_id FROM ids, scirag.enrich_chunks(ids.mixed)), ARRAY[:q1, :q2]::bigint[],
          'mixed input: enrich_chunks keeps exactly the in-scope chunks');
SELECT ok((SELECT bool_and(g.chunk_ids <@ ARRAY[:q1, :q2]::bigint[]) AND string_agg(g.content, ' ') !~ 'SECRET'
           FROM ids, scirag.consolidate(ids.mixed) g),
          'mixed input: consolidation groups hold in-scope chunks and text only');
SELECT is(ARRAY(SELECT chunk_id FROM ids, scirag.mmr_select(ids.mixed, '{0.1, 0.2, 1, 1, 1, 1}', 6) ORDER BY rank),
          ARRAY[:q2, :q1]::bigint[], 'mixed input: MMR picks among in-scope chunks only (out-of-scope relevance ignored)');
SELECT is(ARRAY(SELECT chunk_id FROM ids, scirag.rerank('q', ids.mixed, '{a,b,c,d,e,f}')), ARRAY[:q1, :q2]::bigint[],
          'mixed input: rerank keeps exactly the in-scope chunks');

-- The parent and the middle sibling of p1/p2 are rows the reader may not read.
SELECT is((SELECT ROW(enriched, depth, content ~ 'PARENTSECRET')::text FROM scirag.enrich_chunks(ARRAY[:p1]::bigint[], 150)),
          '(f,0,f)', 'enrichment: a parent the reader may not read contributes nothing (fallback to the chunk)');
SELECT is(scirag.enrichment_metrics(ARRAY[:p1]::bigint[]) ->> 'fallback_count', '1', '... and is counted as a fallback');
SELECT ok((SELECT bool_and(replaced_by IS NULL) AND string_agg(content, ' ') !~ 'SECRET'
           FROM scirag.consolidate(ARRAY[:p1, :p2]::bigint[])),
          'consolidation: no replacement by, no extraction from an unreadable parent, no unreadable sibling merged in');
SELECT ok((SELECT string_agg(content, ' ') !~ 'SECRET' FROM scirag.consolidate(ARRAY[:p1]::bigint[], '{"min_content_length": 5000}')),
          'consolidation growth takes in readable siblings only');
SELECT is(scirag.section_chain(:dpub, 1), ARRAY[1], 'the section chain stops at a row the reader may not read');
SELECT ok((SELECT content ~ 'Notes' FROM scirag.enrich_chunks(ARRAY[:q1]::bigint[], 50)),
          'a readable parent still enriches for the reader');

-- ---------------------------------------------------------------- an empty scope returns nothing
SELECT set_config('scirag.licenses', '', true);
SELECT ok((SELECT count(*) FROM scirag.enrich_chunks(ARRAY[:q1, :q2]::bigint[])) = 0
          AND (SELECT count(*) FROM scirag.consolidate(ARRAY[:q1, :q2]::bigint[])) = 0
          AND (SELECT count(*) FROM scirag.mmr_select(ARRAY[:q1, :q2]::bigint[], '{1, 1}', 2)) = 0
          AND (SELECT count(*) FROM scirag.rerank('q', ARRAY[:q1, :q2]::bigint[], '{a,b}', '{"reranker": "llm"}')) = 0,
          'an explicitly empty license list: every stage returns nothing (and no model is called)');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
