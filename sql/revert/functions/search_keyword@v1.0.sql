-- Revert scirag:functions/search_keyword
BEGIN;
DROP FUNCTION scirag.search_keyword(text, int, double precision);
COMMIT;
