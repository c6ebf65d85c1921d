-- Deploy scirag:functions/eval_compare
-- Two evaluation runs side by side, question by question. A change of configuration is
-- judged on the questions both runs answered: the mean of the paired differences and its
-- standard error say whether a gain is more than the spread of single questions.
-- The standard error treats questions as independent; a run's times are not (they drift
-- with the machine), so for ms it understates the noise: compare times by alternating runs.
-- SECURITY INVOKER: it reads eval_results under the caller's own policies
-- (policies/eval_scope), so a reader compares only the runs and questions it may see.
BEGIN;

CREATE FUNCTION scirag.eval_compare(run_a bigint, run_b bigint)
RETURNS TABLE (metric text, n bigint, mean_a double precision, mean_b double precision,
               diff double precision, se double precision, z double precision,
               median_a double precision, median_b double precision, better bigint, worse bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH v AS (
    -- every number (and yes/no as 1/0) a question's metrics hold, and its time as "ms"
    SELECT r.run_id, r.question_id, m.key AS metric,
           CASE jsonb_typeof(m.value)
             WHEN 'number' THEN (m.value #>> '{}')::double precision
             ELSE CASE WHEN (m.value #>> '{}')::boolean THEN 1.0 ELSE 0.0 END
           END AS x
    FROM scirag.eval_results r, jsonb_each(r.metrics) m
    WHERE r.run_id IN (run_a, run_b) AND jsonb_typeof(m.value) IN ('number', 'boolean')
    UNION ALL
    SELECT r.run_id, r.question_id, 'ms', r.ms
    FROM scirag.eval_results r
    WHERE r.run_id IN (run_a, run_b) AND r.ms IS NOT NULL
  ), paired AS (
    SELECT a.metric, a.x AS xa, b.x AS xb
    FROM v a JOIN v b ON b.question_id = a.question_id AND b.metric = a.metric
    WHERE a.run_id = run_a AND b.run_id = run_b
  )
  SELECT metric, count(*), avg(xa), avg(xb), avg(xb - xa),
         stddev_samp(xb - xa) / sqrt(count(*)),
         -- the difference in standard errors; none when the differences do not vary
         avg(xb - xa) / nullif(stddev_samp(xb - xa) / sqrt(count(*)), 0),
         percentile_cont(0.5) WITHIN GROUP (ORDER BY xa),
         percentile_cont(0.5) WITHIN GROUP (ORDER BY xb),
         count(*) FILTER (WHERE xb > xa), count(*) FILTER (WHERE xb < xa)
  FROM paired
  GROUP BY metric
  ORDER BY metric
$$;
COMMENT ON FUNCTION scirag.eval_compare(bigint, bigint) IS
  'Run B against run A on the questions both scored, one row per per-question metric (numbers; true/false as 1/0; the question''s time as ms): questions paired, both means, the mean paired difference B - A, its standard error and their ratio z, both medians, and how many questions went up and down. Reads under the caller''s row-level security.';
REVOKE ALL ON FUNCTION scirag.eval_compare(bigint, bigint) FROM PUBLIC;
-- scirag_api runs what readers may run (the reader API calls on their behalf)
GRANT EXECUTE ON FUNCTION scirag.eval_compare(bigint, bigint) TO scirag_reader, scirag_loader, scirag_api;

COMMIT;
