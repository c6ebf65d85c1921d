-- Verify scirag:functions/kw_top_bootstrap
DO $$
BEGIN
  ASSERT (SELECT prosrc ~ 'GD.get\(''scirag_path_ready''\)' AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)'::regprocedure),
         'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): bootstraps only when the backend has not yet, pinned search_path';
  ASSERT has_function_privilege('scirag_api', 'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)', 'EXECUTE'), 'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)', 'EXECUTE'), 'scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): scirag_loader lacks EXECUTE';
END $$;
