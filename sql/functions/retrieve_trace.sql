-- Deploy scirag:functions/retrieve_trace
-- Split (issue 28): scirag.last_trace, scirag.trace_error, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges)
-- but for one comment line in trace_error's body, reworded so that it cites no document the
-- repository does not hold (scripts/test_split.sh, COMMENT_EDITS, checks that only
-- comment lines differ),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_trace` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.last_trace()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT nullif(current_setting('scirag.last_trace', true), '')::jsonb $$;
COMMENT ON FUNCTION scirag.last_trace() IS
  'Trace of the last scirag.retrieve call in this session: per stage its status (ok, empty, error, timeout, skipped, disabled), duration and candidate count; an error also its sqlstate and message ("error", with quoted values and the question''s words removed), a skipped stage its reason (deadline, no query embedding, not installed, empty scope). Content-free: never query or chunk text.';

CREATE OR REPLACE FUNCTION scirag.trace_error(stage text, sqlstate text, message text, query text, ms double precision)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  msg text := left(coalesce(message, ''), 300);
  w text;
BEGIN
  -- Traces are content-free (docs/architecture.md): an error message can quote what it
  -- choked on, so quoted values and every word of the question are removed from it.
  msg := regexp_replace(msg, '"[^"]*"', '"…"', 'g');
  msg := regexp_replace(msg, '''[^'']*''', '''…''', 'g');
  FOR w IN SELECT DISTINCT m[1] FROM regexp_matches(coalesce(query, ''), '(\w{3,})', 'g') AS m LIMIT 500 LOOP
    msg := regexp_replace(msg, '\m' || w || '\M', '…', 'gi');
  END LOOP;
  RETURN jsonb_build_object('stage', stage, 'status', 'error', 'sqlstate', sqlstate, 'error', msg,
                            'ms', round(ms::numeric, 2), 'candidates', 0);
END $$;
COMMENT ON FUNCTION scirag.trace_error(text, text, text, text, double precision) IS
  'The trace entry of a stage that failed: stage, status error, its SQLSTATE and message (at most 300 characters, quoted values and the question''s words replaced by …), ms, candidates 0.';

REVOKE ALL ON FUNCTION scirag.last_trace(), scirag.trace_error(text, text, text, text, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.last_trace(), scirag.trace_error(text, text, text, text, double precision) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
