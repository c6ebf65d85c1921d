-- Revert scirag:functions/search_community
BEGIN;
DROP FUNCTION scirag.search_community_chunks(public.vector, int);
DROP FUNCTION scirag.search_community(public.vector, int);
COMMIT;
