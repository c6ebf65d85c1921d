-- chunks.is_reference and eval_runs kind 'pdf' (schema/pdf_fidelity, issue 10):
-- a chunk is not a reference unless the loader says so, and PDF fidelity runs
-- are stored next to the other evaluation runs (any other kind is still refused).
BEGIN;
SELECT plan(6);

SELECT has_column('scirag', 'chunks', 'is_reference', 'chunks.is_reference exists');
SELECT col_not_null('scirag', 'chunks', 'is_reference', 'is_reference is never NULL');
SELECT col_default_is('scirag', 'chunks', 'is_reference', 'false', 'a chunk is not a reference by default');

SELECT lives_ok(
  $$INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint)
    VALUES ('pdf', 'papers', 'layout', '{}', '{}')$$,
  'an eval run of kind pdf is stored');
SELECT throws_ok(
  $$INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint)
    VALUES ('pdfx', 'papers', 'layout', '{}', '{}')$$,
  '23514', NULL, 'an unknown eval kind is still refused');
SELECT ok((SELECT count(*) FROM scirag.eval_runs WHERE kind = 'pdf' AND dataset = 'papers') = 1,
          'exactly the pdf run was stored');

SELECT * FROM finish();
ROLLBACK;
