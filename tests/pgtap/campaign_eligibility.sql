-- Full-text eligibility (issue 24, schema/campaign_eligibility): a decision is on a
-- retrieved report of a record of its campaign, an exclusion carries one of the
-- campaign's reasons, rows are append-only, and only the campaign's role sees them.
BEGIN;
SELECT plan(9);
\ir helpers/fixtures.psql

SELECT tests.login_role('alice', 'scirag_loader') AS alice \gset
SELECT tests.login_role('bob', 'scirag_loader') AS bob \gset
SELECT tests.login_role('reader', 'scirag_reader') AS reader \gset

SELECT tests.as_role(:'alice');
INSERT INTO scirag.campaigns (name, query, exclusion_reasons)
VALUES ('straw ash', 'straw AND ash', ARRAY['wrong topic', 'wrong study design']) RETURNING id AS cid \gset
INSERT INTO scirag.campaign_queries (campaign_id, source, query) VALUES (:cid, 'openalex', 'q') RETURNING id AS qid \gset
INSERT INTO scirag.campaign_records (campaign_id, query_id, source, source_id, title, norm_title, year)
VALUES (:cid, :qid, 'openalex', 'W1', 'Straw ash', 'straw ash', 2020) RETURNING id AS r1 \gset
INSERT INTO scirag.campaign_records (campaign_id, query_id, source, source_id, title, norm_title, year)
VALUES (:cid, :qid, 'openalex', 'W2', 'Ash', 'ash', 2021) RETURNING id AS r2 \gset
INSERT INTO scirag.screening_decisions (campaign_id, record_id, decision, decider) VALUES (:cid, :r1, 'include', 'human');
INSERT INTO scirag.campaign_downloads (campaign_id, record_id, url, status, sha256, pages, path)
VALUES (:cid, :r1, 'https://example.org/1.pdf', 'ok', repeat('a', 64), 3, 'pdfs/1.pdf') RETURNING id AS w1 \gset
INSERT INTO scirag.campaign_downloads (campaign_id, record_id, url, status, error)
VALUES (:cid, :r2, 'https://example.org/2.pdf', 'failed', 'HTTP 404') RETURNING id AS w2 \gset

INSERT INTO scirag.eligibility_decisions (campaign_id, record_id, download_id, decision, reason, decider)
VALUES (:cid, :r1, :w1, 'exclude', 'wrong study design', 'human') RETURNING id AS e1 \gset
SELECT throws_ok(
  format($$UPDATE scirag.eligibility_decisions SET decision = 'eligible' WHERE id = %s$$, :e1),
  '42501', NULL, 'a full-text decision is never overwritten');
SELECT throws_ok(
  format($$DELETE FROM scirag.eligibility_decisions WHERE id = %s$$, :e1), '42501', NULL, 'nor deleted');
INSERT INTO scirag.eligibility_decisions (campaign_id, record_id, download_id, decision, decider, supersedes)
VALUES (:cid, :r1, :w1, 'eligible', 'human', :e1);
SELECT is((SELECT decision FROM scirag.campaign_current_eligibility WHERE record_id = :r1), 'eligible',
  'a later row supersedes: the current full-text decision is the latest');
SELECT throws_ok(
  format($$INSERT INTO scirag.eligibility_decisions (campaign_id, record_id, download_id, decision, decider)
           VALUES (%s, %s, %s, 'eligible', 'human')$$, :cid, :r2, :w2),
  '23503', NULL, 'a report that was not retrieved (failed download) cannot be assessed');
SELECT throws_ok(
  format($$INSERT INTO scirag.eligibility_decisions (campaign_id, record_id, download_id, decision, decider)
           VALUES (%s, %s, %s, 'eligible', 'human')$$, :cid, :r2, :w1),
  '23503', NULL, 'a decision names the download of its own record');
SELECT throws_ok(
  format($$INSERT INTO scirag.eligibility_decisions (campaign_id, record_id, download_id, decision, reason, decider)
           VALUES (%s, %s, %s, 'exclude', 'no reason I know', 'human')$$, :cid, :r1, :w1),
  '23514', NULL, 'a full-text exclusion reason outside the campaign''s list is refused');

SELECT tests.as_role(:'bob');
SELECT is((SELECT count(*)::int FROM scirag.eligibility_decisions) + (SELECT count(*)::int FROM scirag.campaign_current_eligibility),
  0, 'another role sees no full-text decision of alice''s');
SELECT throws_ok(
  format($$INSERT INTO scirag.eligibility_decisions (campaign_id, record_id, download_id, decision, decider)
           VALUES (%s, %s, %s, 'eligible', 'human')$$, :cid, :r1, :w1),
  '23503', NULL, 'nor decides on alice''s reports (they are invisible to him)');

SELECT tests.as_role(:'reader');
SELECT throws_ok($$SELECT count(*) FROM scirag.eligibility_decisions$$, '42501', NULL, 'a reader cannot read them');

SELECT * FROM finish();
ROLLBACK;
