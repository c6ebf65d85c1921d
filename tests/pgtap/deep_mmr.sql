-- MMR diversity selection (scirag.mmr_select, VulcanLab retrieval step 5): the
-- reference's example of five chunks all saying the same thing.
BEGIN;
SELECT plan(13);
\ir helpers/fixtures.psql
\ir deep_fixtures.psql

SELECT tests.as_role('scirag_loader');
-- Five near-duplicates (1-5 degrees from one frame vector: cosine similarity > 0.99
-- to each other) with the highest relevance, two distinct chunks (orthogonal frame
-- vectors) a little less relevant, and an unrelated chunk with the lowest relevance.
SELECT tests.deep_doc('mmr') AS dm \gset
SELECT tests.deep_chunk(:dm, 0, NULL, 'section', 'All', 'All' || E'\n\n' || 'everything', 1, 20) AS sec \gset
SELECT count(tests.deep_chunk(:dm, i, 0, 'prose', NULL, 'duplicate ' || i, i, i, tests.fvec(i, i * 60, 0))) AS n_dups
FROM generate_series(1, 5) AS i \gset
SELECT array_agg(chunk_id ORDER BY ordinal) AS dups FROM tests.fx WHERE external_id = 'mmr' AND ordinal BETWEEN 1 AND 5 \gset
SELECT tests.deep_chunk(:dm, 6, 0, 'prose', NULL, 'distinct one', 6, 6, tests.frame_vec(3)) AS d1 \gset
SELECT tests.deep_chunk(:dm, 7, 0, 'prose', NULL, 'distinct two', 7, 7, tests.frame_vec(4)) AS d2 \gset
SELECT tests.deep_chunk(:dm, 8, 0, 'prose', NULL, 'unrelated', 8, 8, tests.frame_vec(5)) AS far \gset

CREATE TEMP TABLE cand AS
SELECT (:'dups'::bigint[] || ARRAY[:d1, :d2, :far]::bigint[]) AS ids,
       ARRAY[1.0, 0.98, 0.96, 0.94, 0.92, 0.8, 0.6, 0.0]::float8[] AS rel;
GRANT SELECT ON cand TO PUBLIC;

SELECT cmp_ok((SELECT min(1 - (a.embedding OPERATOR(public.<=>) b.embedding)) FROM scirag.chunks a, scirag.chunks b
               WHERE a.id = ANY (:'dups'::bigint[]) AND b.id = ANY (:'dups'::bigint[])), '>', 0.99::float8,
              'fixture: the five duplicates are more than 0.99 similar to each other');

SELECT is(ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, cand.rel, 3, 0.7) ORDER BY rank),
          ARRAY[(:'dups'::bigint[])[1], :d1, :d2],
          'lambda 0.7: the best duplicate, then the two distinct chunks instead of four more duplicates');
SELECT is(ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, cand.rel, 3, 1.0) ORDER BY rank),
          (:'dups'::bigint[])[1:3],
          'lambda 1: pure relevance order (three duplicates)');
SELECT is(ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, cand.rel, 3) ORDER BY rank),
          ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, cand.rel, 3,
                                                             (scirag.preset_defaults() #>> '{retrieval,mmr_lambda}')::float8) ORDER BY rank),
          'mmr_lambda defaults to the preset default (0.7)');
SELECT is(ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, ARRAY(SELECT 100 * r + 5 FROM unnest(cand.rel) r), 3) ORDER BY rank),
          ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, cand.rel, 3) ORDER BY rank),
          'relevance is normalised: scaling and shifting the scores changes nothing');
SELECT is(ARRAY(SELECT rank FROM cand, scirag.mmr_select(cand.ids, cand.rel, 4) ORDER BY rank), ARRAY[1, 2, 3, 4],
          'ranks run 1..k');
SELECT is((SELECT count(*)::int FROM cand, scirag.mmr_select(cand.ids, cand.rel, 50)), 8,
          'k larger than the candidates returns every candidate once');
SELECT is((SELECT count(*)::int FROM cand, scirag.mmr_select(cand.ids, cand.rel, 0)), 0, 'k = 0 returns nothing');
SELECT is(ARRAY(SELECT chunk_id FROM scirag.mmr_select(ARRAY[:far, :d1, :far]::bigint[], ARRAY[0.9, 0.5, 1.0], 3) ORDER BY rank),
          ARRAY[:far, :d1]::bigint[], 'a repeated id counts once, with its first relevance');
SELECT is(ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(ARRAY[(cand.ids)[1], (cand.ids)[2], :sec, :d1]::bigint[],
                                                             ARRAY[1.0, 0.98, 0.95, 0.8], 2) ORDER BY rank),
          ARRAY[(:'dups'::bigint[])[1], :sec],
          'a chunk without an embedding (a section) counts as unlike everything');
SELECT throws_ok($$SELECT * FROM scirag.mmr_select('{1,2}', '{1}', 2)$$, '22023', NULL,
                 'chunk_ids and relevance of different lengths are refused');
SELECT throws_ok($$SELECT * FROM scirag.mmr_select('{1}', '{1}', 1, 1.5)$$, '22023', NULL,
                 'mmr_lambda outside [0, 1] is refused');

-- One place for the default lambda (issue 16): with the preset default planted at 1
-- (rolled back), mmr_select called without a lambda follows it (pure relevance order).
SELECT tests.as_role(NULL);
CREATE OR REPLACE FUNCTION scirag.preset_defaults() RETURNS jsonb LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT '{"retrieval": {"mmr_lambda": 1.0}}'::jsonb $$;
SELECT tests.as_role('scirag_loader');
SELECT is(ARRAY(SELECT chunk_id FROM cand, scirag.mmr_select(cand.ids, cand.rel, 3) ORDER BY rank),
          (:'dups'::bigint[])[1:3],
          'mmr_select''s default lambda is the preset default, not a number of its own');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
