-- Consolidation (scirag.consolidate, VulcanLab stage 2): coverage-based replacement
-- (the reference's worked example 3), adjacent merging, heading breadcrumbs,
-- repetition to a fixed point, growth of short groups, options and presets.
BEGIN;
SELECT plan(25);
\ir helpers/fixtures.psql
\ir deep_fixtures.psql

SELECT tests.as_role('scirag_loader');

-- ---------------------------------------------------------------- Example 3 fixture
-- Section P "Results" has 2000 characters; its children f1 (500), f2 (300) and
-- f3 (400) are retrieved, g (785) is not. P sits in a report whose other section
-- is large, so that P alone never covers half of the report.
SELECT tests.deep_doc('ex3') AS d3 \gset
SELECT tests.deep_chunk(:d3, 0, NULL, 'section', 'Report',
  'Report' || E'\n\n' || 'Results' || E'\n\n' || tests.chars('fa', 500) || E'\n\n' || tests.chars('fb', 300) || E'\n\n'
  || tests.chars('fc', 400) || E'\n\n' || tests.chars('gg', 785) || E'\n\n' || 'Other' || E'\n\n' || tests.chars('oo', 4000),
  1, 200) AS r3_id \gset
SELECT tests.deep_chunk(:d3, 1, 0, 'section', 'Results',
  'Results' || E'\n\n' || tests.chars('fa', 500) || E'\n\n' || tests.chars('fb', 300) || E'\n\n'
  || tests.chars('fc', 400) || E'\n\n' || tests.chars('gg', 785), 8, 80) AS p_id \gset
SELECT tests.deep_chunk(:d3, 2, 1, 'prose', NULL, tests.chars('fa', 500), 10, 14) AS f1 \gset
SELECT tests.deep_chunk(:d3, 3, 1, 'prose', NULL, tests.chars('fb', 300), 30, 32) AS f2 \gset
SELECT tests.deep_chunk(:d3, 4, 1, 'prose', NULL, tests.chars('fc', 400), 50, 53) AS f3 \gset
SELECT tests.deep_chunk(:d3, 5, 1, 'prose', NULL, tests.chars('gg', 785), 70, 80) AS g_id \gset
SELECT tests.deep_chunk(:d3, 6, 0, 'section', 'Other', 'Other' || E'\n\n' || tests.chars('oo', 4000), 90, 200) AS o_id \gset
SELECT tests.deep_chunk(:d3, 7, 6, 'prose', NULL, tests.chars('oo', 4000), 92, 200) AS o1 \gset

SELECT is(ARRAY[length(tests.body(:p_id)), length(tests.body(:f1)), length(tests.body(:f2)), length(tests.body(:f3))],
          ARRAY[2000, 500, 300, 400], 'fixture: parent P has 2000 characters, fragments 500, 300 and 400');

-- ---------------------------------------------------------------- Example 3
SELECT is((SELECT count(*)::int FROM scirag.consolidate(ARRAY[:f1, :f2, :f3]::bigint[])), 1,
          'Example 3: the three fragments become one group');
SELECT is((SELECT ROW(replaced_by, chunk_ids)::text FROM scirag.consolidate(ARRAY[:f1, :f2, :f3]::bigint[])),
          ROW(:p_id::bigint, ARRAY[:f1, :f2, :f3]::bigint[])::text,
          'Example 3: coverage (500+300+400)/2000 = 60% >= 50%: replaced by parent P, accounting for f1, f2, f3');
SELECT is((SELECT content FROM scirag.consolidate(ARRAY[:f1, :f2, :f3]::bigint[])), tests.body(:p_id),
          'Example 3: the group holds the complete parent (2000 characters)');
SELECT is((SELECT ROW(section_path, line_start, line_end, document_id)::text FROM scirag.consolidate(ARRAY[:f1, :f2, :f3]::bigint[])),
          ROW('Report > Results', 8, 80, :d3::bigint)::text,
          'Example 3: the group keeps P''s heading breadcrumb and source lines');
SELECT is((SELECT count(*)::int FROM scirag.consolidate(ARRAY[:f1, :f2, :f3]::bigint[], '{"coverage_threshold": 0.7, "min_content_length": 0}')
           WHERE replaced_by IS NULL), 3,
          'coverage 60% < threshold 70%: no replacement, three groups');
SELECT is((SELECT array_agg(replaced_by IS NULL ORDER BY group_no)
           FROM scirag.consolidate(ARRAY[:f1, :f2]::bigint[], '{"min_content_length": 0}')), ARRAY[true, true],
          'f1 + f2 cover 40% of P: no replacement');
SELECT is((SELECT ROW(replaced_by, chunk_ids)::text FROM scirag.consolidate(ARRAY[:f1, :f2]::bigint[], '{"preset": "detailed-context"}')),
          ROW(:p_id::bigint, ARRAY[:f1, :f2]::bigint[])::text,
          'options.preset: detailed-context (coverage_threshold 0.4) replaces f1 + f2 by P');

-- ---------------------------------------------------------------- adjacent merging
-- Section "Methods": h1 (lines 100-102), x (104, not retrieved), h2 (106-108), h3 (130-131)
-- and a long z, so that the retrieved children never cover half of it.
SELECT tests.deep_doc('mg', title => 'Merge fixture') AS dm \gset
SELECT tests.deep_chunk(:dm, 0, NULL, 'section', 'Doc',
  'Doc' || E'\n\n' || 'Methods' || E'\n\n' || tests.chars('ha', 400) || E'\n\n' || tests.chars('xx', 60) || E'\n\n'
  || tests.chars('hb', 400) || E'\n\n' || tests.chars('hc', 400) || E'\n\n' || tests.chars('zz', 4000), 1, 300) AS root_m \gset
SELECT tests.deep_chunk(:dm, 1, 0, 'section', 'Methods',
  'Methods' || E'\n\n' || tests.chars('ha', 400) || E'\n\n' || tests.chars('xx', 60) || E'\n\n'
  || tests.chars('hb', 400) || E'\n\n' || tests.chars('hc', 400) || E'\n\n' || tests.chars('zz', 4000), 98, 300) AS q_id \gset
SELECT tests.deep_chunk(:dm, 2, 1, 'prose', NULL, tests.chars('ha', 400), 100, 102) AS h1 \gset
SELECT tests.deep_chunk(:dm, 3, 1, 'prose', NULL, tests.chars('xx', 60), 104, 104) AS x_id \gset
SELECT tests.deep_chunk(:dm, 4, 1, 'prose', NULL, tests.chars('hb', 400), 106, 108) AS h2 \gset
SELECT tests.deep_chunk(:dm, 5, 1, 'prose', NULL, tests.chars('hc', 400), 130, 131) AS h3 \gset
SELECT tests.deep_chunk(:dm, 6, 1, 'prose', NULL, tests.chars('zz', 4000), 140, 300) AS z_id \gset

SELECT is((SELECT array_agg(chunk_ids::text ORDER BY group_no) FROM scirag.consolidate(ARRAY[:h1, :h2, :h3]::bigint[])),
          ARRAY[ARRAY[:h1, :h2]::bigint[]::text, ARRAY[:h3]::bigint[]::text],
          'h1 and h2 (3 lines apart, line_gap 7) merge; h3 (21 lines away) stays alone');
SELECT is((SELECT content FROM scirag.consolidate(ARRAY[:h1, :h2, :h3]::bigint[]) WHERE group_no = 1),
          tests.body(:h1) || E'\n\n' || tests.body(:x_id) || E'\n\n' || tests.body(:h2),
          'enrich_from_parent: the merged text is cut from the parent, with the sibling in between (continuity)');
SELECT is((SELECT content FROM scirag.consolidate(ARRAY[:h1, :h2, :h3]::bigint[], '{"enrich_from_parent": false}') WHERE group_no = 1),
          tests.body(:h1) || E'\n\n[…]\n\n' || tests.body(:h2),
          'enrich_from_parent false: the chunks are joined and the sibling left out is marked');
SELECT is((SELECT ROW(section_path, line_start, line_end, replaced_by)::text
           FROM scirag.consolidate(ARRAY[:h1, :h2, :h3]::bigint[]) WHERE group_no = 1),
          ROW('Doc > Methods', 100, 108, NULL::bigint)::text,
          'the merged group keeps its heading breadcrumb and spans lines 100-108');
SELECT is((SELECT count(*)::int FROM scirag.consolidate(ARRAY[:h1, :h2, :h3]::bigint[], '{"line_gap": 2}')), 3,
          'line_gap 2: h1 and h2 (3 lines apart) stay apart');
SELECT is((SELECT array_agg(chunk_ids::text ORDER BY group_no) FROM scirag.consolidate(ARRAY[:h3, :h2, :h1]::bigint[])),
          ARRAY[ARRAY[:h3]::bigint[]::text, ARRAY[:h1, :h2]::bigint[]::text],
          'groups are numbered by their best-ranked member (input order)');

-- ---------------------------------------------------------------- overlap
-- A paragraph split over two chunks: the second repeats the first one's last sentence.
SELECT tests.deep_doc('ov', title => 'Overlap fixture') AS dov \gset
SELECT tests.deep_chunk(:dov, 0, NULL, 'section', 'Notes',
  'Notes' || E'\n\n' || 'Alpha sentence one is here. Beta sentence two is the carried one. Gamma sentence three follows it. Delta sentence four ends it.',
  1, 4) AS ov_root \gset
SELECT tests.deep_chunk(:dov, 1, 0, 'prose', NULL, 'Alpha sentence one is here. Beta sentence two is the carried one.', 3, 3) AS ov1 \gset
SELECT tests.deep_chunk(:dov, 2, 0, 'prose', NULL,
  'Beta sentence two is the carried one. Gamma sentence three follows it. Delta sentence four ends it.', 4, 4) AS ov2 \gset
SELECT is((SELECT content FROM scirag.consolidate(ARRAY[:ov1, :ov2]::bigint[],
             '{"enrich_from_parent": false, "coverage_threshold": 1, "min_content_length": 0}')),
          'Alpha sentence one is here. Beta sentence two is the carried one. Gamma sentence three follows it. Delta sentence four ends it.',
          'joining adjacent chunks keeps one copy of the overlap the loader carried over');
SELECT is((SELECT content FROM scirag.consolidate(ARRAY[:ov1, :ov2]::bigint[], '{"coverage_threshold": 1, "min_content_length": 0}')),
          'Alpha sentence one is here. Beta sentence two is the carried one. Gamma sentence three follows it. Delta sentence four ends it.',
          'cut from the parent, the same span reads the same');

-- ---------------------------------------------------------------- fixed point and containment
-- Section "Study": s1 (300), s2 (400, not retrieved), s3 (300), s4 (700). s1 + s3 cover
-- 35% of it; merged (s1..s3, 1004 characters) they cover 59%: the next round replaces
-- them by the section. The book's other section keeps the book itself out of reach.
SELECT tests.deep_doc('fp', title => 'Fixed point fixture') AS dfp \gset
SELECT tests.deep_chunk(:dfp, 0, NULL, 'section', 'Book',
  'Book' || E'\n\n' || 'Study' || E'\n\n' || tests.chars('sa', 300) || E'\n\n' || tests.chars('sb', 400) || E'\n\n'
  || tests.chars('sc', 300) || E'\n\n' || tests.chars('sd', 700) || E'\n\n' || 'Appendix' || E'\n\n' || tests.chars('ap', 3000),
  1, 300) AS book \gset
SELECT tests.deep_chunk(:dfp, 1, 0, 'section', 'Study',
  'Study' || E'\n\n' || tests.chars('sa', 300) || E'\n\n' || tests.chars('sb', 400) || E'\n\n'
  || tests.chars('sc', 300) || E'\n\n' || tests.chars('sd', 700), 8, 60) AS s_id \gset
SELECT tests.deep_chunk(:dfp, 2, 1, 'prose', NULL, tests.chars('sa', 300), 10, 12) AS s1 \gset
SELECT tests.deep_chunk(:dfp, 3, 1, 'prose', NULL, tests.chars('sb', 400), 14, 17) AS s2 \gset
SELECT tests.deep_chunk(:dfp, 4, 1, 'prose', NULL, tests.chars('sc', 300), 19, 21) AS s3 \gset
SELECT tests.deep_chunk(:dfp, 5, 1, 'prose', NULL, tests.chars('sd', 700), 40, 60) AS s4 \gset
SELECT tests.deep_chunk(:dfp, 6, 0, 'section', 'Appendix', 'Appendix' || E'\n\n' || tests.chars('ap', 3000), 70, 300) AS app \gset
SELECT tests.deep_chunk(:dfp, 7, 6, 'prose', NULL, tests.chars('ap', 3000), 72, 300) AS ap1 \gset

SELECT is((SELECT ROW(count(*), min(replaced_by), min(chunk_ids::text))::text
           FROM scirag.consolidate(ARRAY[:s1, :s3]::bigint[])),
          ROW(1, :s_id::bigint, ARRAY[:s1, :s3]::bigint[]::text)::text,
          'repeated to a fixed point: merging s1..s3 raises coverage to 59%, so the next round replaces them by "Study"');
SELECT is((SELECT count(*)::int FROM scirag.consolidate(ARRAY[:s1, :s3]::bigint[], '{"line_gap": 5, "min_content_length": 0}')), 2,
          'control: with line_gap 5 (and no growth) nothing merges, coverage stays at 35%, two groups');
SELECT is((SELECT ROW(count(*), min(chunk_ids::text), min(content) = tests.body(:s_id))::text
           FROM scirag.consolidate(ARRAY[:s_id, :s4]::bigint[])),
          ROW(1, ARRAY[:s_id, :s4]::bigint[]::text, true)::text,
          'a retrieved section absorbs its retrieved descendants (their text is already in it)');

-- ---------------------------------------------------------------- min_content_length
-- Section "Tiny": t1 (100 characters), t2 (200), t3 (300), t4 (2000).
SELECT tests.deep_doc('gr', title => 'Growth fixture') AS dgr \gset
SELECT tests.deep_chunk(:dgr, 0, NULL, 'section', 'Tiny',
  'Tiny' || E'\n\n' || tests.chars('ta', 100) || E'\n\n' || tests.chars('tb', 200) || E'\n\n' || tests.chars('tc', 300)
  || E'\n\n' || tests.chars('td', 2000), 1, 80) AS tiny \gset
SELECT tests.deep_chunk(:dgr, 1, 0, 'prose', NULL, tests.chars('ta', 100), 5, 5) AS t1 \gset
SELECT tests.deep_chunk(:dgr, 2, 0, 'prose', NULL, tests.chars('tb', 200), 7, 8) AS t2 \gset
SELECT tests.deep_chunk(:dgr, 3, 0, 'prose', NULL, tests.chars('tc', 300), 20, 25) AS t3 \gset
SELECT tests.deep_chunk(:dgr, 4, 0, 'prose', NULL, tests.chars('td', 2000), 40, 80) AS t4 \gset

SELECT is((SELECT ROW(chunk_ids, content, line_start, line_end)::text FROM scirag.consolidate(ARRAY[:t1]::bigint[])),
          ROW(ARRAY[:t1]::bigint[], tests.body(:t1) || E'\n\n' || tests.body(:t2) || E'\n\n' || tests.body(:t3), 5, 25)::text,
          'min_content_length 350: a 100-character group takes in its nearest siblings until it has 350 (t2, then t3)');
SELECT is((SELECT content FROM scirag.consolidate(ARRAY[:t1]::bigint[], '{"min_content_length": 0}')), tests.body(:t1),
          'min_content_length 0: the group stays as it is');
SELECT is((SELECT array_agg(chunk_ids::text) FROM scirag.consolidate(ARRAY[:f1, :f2]::bigint[])),
          ARRAY[ARRAY[:f1, :f2]::bigint[]::text],
          'Example 3 data: f2 (300 < 350) takes in its nearest sibling f1, and the two become one group (still 40%: not replaced)');

-- ---------------------------------------------------------------- options
SELECT throws_ok($$SELECT * FROM scirag.consolidate('{1}', '{"bogus": 1}')$$, '22023',
                 'scirag preset: unknown key "consolidation.bogus"', 'an unknown option raises, naming the key');
SELECT throws_ok($$SELECT * FROM scirag.consolidate('{1}', '{"line_gap": "seven"}')$$, '22023',
                 'scirag preset: key "consolidation.line_gap" must be an integer (got string)', 'a wrongly typed option raises, naming the key');
SELECT is((SELECT count(*)::int FROM scirag.consolidate(ARRAY[NULL, -5]::bigint[])), 0, 'unknown ids give no groups');

SELECT tests.as_role(NULL);
SELECT * FROM finish();
ROLLBACK;
