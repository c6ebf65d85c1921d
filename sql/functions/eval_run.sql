-- Deploy scirag:functions/eval_run
-- What the one eval-run starter (python/loader/scirag/evaluation.py start_run) reads
-- from the evaluating connection, and the rule that decides who sees a run
-- (issue 13 item 7, issue 16). Neither restates a scope rule: both use the scope
-- functions (functions/scope).
BEGIN;

CREATE OR REPLACE FUNCTION scirag.eval_scope()
RETURNS jsonb
LANGUAGE sql STABLE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
  -- Run on the connection the evaluation retrieves through (a reader with its
  -- scope): the fingerprint then counts exactly the documents that run could see.
  SELECT jsonb_build_object('licenses', to_jsonb(scirag.scope_licenses()),
                            'sources', to_jsonb(scirag.scope_sources()),
                            'fingerprint', scirag.corpus_fingerprint_full())
$$;
COMMENT ON FUNCTION scirag.eval_scope() IS
  'The caller''s effective scope ({"licenses": [...], "sources": [...] or null = any}) and the corpus fingerprint within it (corpus_fingerprint_full as the caller): what an evaluation run records.';

CREATE OR REPLACE FUNCTION scirag.eval_run_visible(licenses text[], sources text[])
RETURNS boolean
LANGUAGE sql STABLE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
  -- A run's numbers (fingerprint counts, per-question rows) describe its scope:
  -- shown only to a caller whose scope holds that whole scope.
  SELECT licenses <@ scirag.scope_licenses()
         AND (scirag.scope_sources() IS NULL OR (sources IS NOT NULL AND sources <@ scirag.scope_sources()))
$$;
COMMENT ON FUNCTION scirag.eval_run_visible(text[], text[]) IS
  'True when an evaluation run''s scope (license classes; sources, NULL = any) lies within the caller''s effective scope. The eval tables'' policies (policies/eval_scope) use it.';

REVOKE ALL ON FUNCTION scirag.eval_scope(), scirag.eval_run_visible(text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.eval_scope(), scirag.eval_run_visible(text[], text[]) TO scirag_reader, scirag_loader;
COMMIT;
