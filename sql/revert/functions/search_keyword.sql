-- Revert scirag:functions/search_keyword (to its @v1.2 version: MaxScore in SQL)
\ir ../../functions/search_keyword@v1.2.sql
BEGIN;
DROP FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean);
DROP FUNCTION scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean);
DROP FUNCTION scirag.kw_top_trace();
-- the released script's CREATE OR REPLACE made search_keyword SECURITY INVOKER again
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
