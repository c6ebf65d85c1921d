-- Revert scirag:functions/search_vector
BEGIN;
DROP FUNCTION scirag.search_vector(public.vector, int);
COMMIT;
