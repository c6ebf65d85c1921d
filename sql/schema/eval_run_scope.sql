-- Deploy scirag:schema/eval_run_scope
-- An evaluation run records the scope it ran under (issue 13 item 7): its corpus
-- fingerprint and its per-question rows describe that scope's documents only, and a
-- reader sees the run only when that scope lies within its own (policies/eval_scope).
-- Runs stored before this change had fingerprints computed over the whole corpus:
-- they are filed under the widest scope (every license class, any source), so only
-- a caller who may see everything sees them. The default is that same widest scope,
-- so a run written without a scope fails closed.
BEGIN;

ALTER TABLE scirag.eval_runs
  ADD COLUMN scope_licenses text[] NOT NULL
    DEFAULT ARRAY['public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown']
    CHECK (scope_licenses <@ ARRAY['public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown']),
  ADD COLUMN scope_sources text[];
COMMENT ON COLUMN scirag.eval_runs.scope_licenses IS
  'license classes the run could see (scirag.scope_licenses() of the evaluating connection); the fingerprint counts only them. Readers see the run only when these are all in their scope. Default: every class (fail closed)';
COMMENT ON COLUMN scirag.eval_runs.scope_sources IS
  'sources the run could see (scirag.scope_sources(); NULL = any source). Readers limited to some sources see only runs limited to sources among theirs';
COMMENT ON COLUMN scirag.eval_runs.corpus_fingerprint IS
  'document, chunk and graph counts, embedding versions, latest ingestion, within the run''s scope (scope_licenses, scope_sources): a number without it is a rumour';
COMMIT;
