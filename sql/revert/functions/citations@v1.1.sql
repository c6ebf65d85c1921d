-- Revert scirag:functions/citations
BEGIN;
DROP FUNCTION scirag.references(bigint);
DROP FUNCTION scirag.cited_by(bigint);
COMMIT;
