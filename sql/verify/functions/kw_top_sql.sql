-- Verify scirag:functions/kw_top_sql
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)'::regprocedure),
         'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_api', 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)', 'EXECUTE'), 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)', 'EXECUTE'), 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): scirag_loader lacks EXECUTE';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean)', 'EXECUTE'), 'scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean): scirag_reader may execute it';
END $$;
