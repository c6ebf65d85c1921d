-- Literature campaigns (issue 24, schema/campaigns): a campaign belongs to a role and
-- nobody else sees anything of it; every campaign table is append-only (a decision is
-- superseded by a later row, never rewritten); an exclusion carries a reason from the
-- campaign's list.
BEGIN;
SELECT plan(19);
\ir helpers/fixtures.psql

SELECT tests.login_role('alice', 'scirag_loader') AS alice \gset
SELECT tests.login_role('bob', 'scirag_loader') AS bob \gset
SELECT tests.login_role('reader', 'scirag_reader') AS reader \gset

-- ---------------------------------------------------------------- alice's campaign
SELECT tests.as_role(:'alice');
INSERT INTO scirag.campaigns (name, query, exclusion_reasons)
VALUES ('straw ash', 'straw AND ash', ARRAY['wrong topic', 'review']) RETURNING id AS cid \gset
INSERT INTO scirag.campaign_queries (campaign_id, source, query) VALUES (:cid, 'openalex', 'straw AND ash')
RETURNING id AS qid \gset
INSERT INTO scirag.campaign_pages (query_id, campaign_id, page_no, cursor, next_cursor, n_records)
VALUES (:qid, :cid, 1, '*', 'c2', 2);
INSERT INTO scirag.campaign_records (campaign_id, query_id, source, source_id, doi, title, norm_title, year)
VALUES (:cid, :qid, 'openalex', 'W1', '10.1/a', 'Straw ash slagging', 'straw ash slagging', 2020) RETURNING id AS r1 \gset
INSERT INTO scirag.campaign_records (campaign_id, query_id, source, source_id, title, norm_title, year)
VALUES (:cid, :qid, 'openalex', 'W2', 'Cows', 'cows', 2021) RETURNING id AS r2 \gset
INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, reason, decider)
VALUES (:cid, :r1, 'exclude', 'wrong topic', 'human') RETURNING id AS d1 \gset

SELECT is((SELECT owner_role::text FROM scirag.campaigns WHERE id = :cid), :'alice',
  'a campaign belongs to the role that created it');

SELECT throws_ok(
  format($$UPDATE scirag.screening_decisions SET decision = 'include' WHERE id = %s$$, :d1),
  '42501', NULL, 'a decision is never overwritten (UPDATE refused)');
SELECT throws_ok(
  format($$DELETE FROM scirag.screening_decisions WHERE id = %s$$, :d1),
  '42501', NULL, 'a decision is never deleted');
SELECT throws_ok(
  format($$UPDATE scirag.campaign_records SET title = 'x' WHERE id = %s$$, :r1),
  '42501', NULL, 'records are append-only too');

INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, decider, supersedes)
VALUES (:cid, :r1, 'include', 'human', :d1);
SELECT is((SELECT decision FROM scirag.campaign_current_decisions WHERE record_id = :r1), 'include',
  'a later row supersedes: the current decision is the latest');
SELECT is((SELECT count(*)::int FROM scirag.screening_decisions WHERE record_id = :r1), 2,
  'the superseded decision stays on record');

SELECT throws_ok(
  format($$INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, decider)
           VALUES (%s, %s, 'exclude', 'human')$$, :cid, :r2),
  '23514', NULL, 'an exclusion without a reason is refused');
SELECT throws_ok(
  format($$INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, reason, decider)
           VALUES (%s, %s, 'exclude', 'too long', 'human')$$, :cid, :r2),
  '23514', NULL, 'an exclusion reason outside the campaign''s list is refused');
SELECT throws_ok(
  format($$INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, decider, supersedes)
           VALUES (%s, %s, 'include', 'human', %s)$$, :cid, :r2, :d1),
  '23503', NULL, 'a decision cannot supersede a decision on another record');
SELECT throws_ok(
  format($$INSERT INTO scirag.campaign_pages (query_id, campaign_id, page_no, n_records) VALUES (%s, %s, 1, 0)$$, :qid, :cid),
  '23505', NULL, 'a page is recorded once (a resumed discovery cannot duplicate it)');

-- ---------------------------------------------------------------- bob, another loader
SELECT tests.as_role(:'bob');
SELECT is((SELECT count(*)::int FROM scirag.campaigns), 0, 'another role sees no campaign of alice''s');
SELECT is((SELECT count(*)::int FROM scirag.campaign_records) + (SELECT count(*)::int FROM scirag.screening_decisions)
          + (SELECT count(*)::int FROM scirag.campaign_pages) + (SELECT count(*)::int FROM scirag.campaign_current_decisions),
  0, 'nor its records, pages or decisions');
SELECT throws_ok(
  format($$INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, decider) VALUES (%s, %s, 'include', 'human')$$,
         :cid, :r2),
  '23503', NULL, 'another role cannot decide in alice''s campaign (its records are invisible to him)');
SELECT throws_ok(
  format($$INSERT INTO scirag.campaign_pages (query_id, campaign_id, page_no, n_records) VALUES (%s, %s, 9, 0)$$, :qid, :cid),
  '42501', NULL, 'another role cannot write into alice''s campaign (row-level security)');
SELECT throws_ok(
  format($$INSERT INTO scirag.campaigns (name, query, owner_role) VALUES ('stolen', 'q', %L)$$, :'alice'),
  '42501', NULL, 'another role cannot create a campaign in alice''s name');
INSERT INTO scirag.campaigns (name, query) VALUES ('straw ash', 'straw');
SELECT is((SELECT count(*)::int FROM scirag.campaigns), 1, 'bob may have a campaign of the same name, his own');

-- ---------------------------------------------------------------- a reader
SELECT tests.as_role(:'reader');
SELECT throws_ok($$SELECT count(*) FROM scirag.campaigns$$, '42501', NULL, 'a reader cannot read campaigns');

-- ---------------------------------------------------------------- a dropped owner role
SELECT tests.as_role(NULL);
CREATE ROLE tst_campaign_gone NOLOGIN;
INSERT INTO scirag.campaigns (name, query, owner_role) VALUES ('orphan', 'q', 'tst_campaign_gone');
DROP ROLE tst_campaign_gone;
SELECT tests.as_role(:'bob');
SELECT is((SELECT count(*)::int FROM scirag.campaigns WHERE name = 'orphan'), 0,
  'a campaign whose owner role was dropped is unseen, and the table stays readable');

-- ---------------------------------------------------------------- a planted error is caught
SELECT tests.as_role(NULL);
SELECT ok(
  (SELECT count(*) FROM pg_policy WHERE polrelid = 'scirag.screening_decisions'::regclass) = 1
  AND (SELECT pg_get_expr(polqual, polrelid) FROM pg_policy WHERE polrelid = 'scirag.campaigns'::regclass) LIKE '%owner_role%',
  'the campaign policies key on the owner role');

SELECT * FROM finish();
ROLLBACK;
