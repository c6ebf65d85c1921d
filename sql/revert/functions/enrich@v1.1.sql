-- Revert scirag:functions/enrich
BEGIN;
DROP FUNCTION scirag.enrichment_metrics(bigint[], int, int), scirag.enrich_chunks(bigint[], int, int);
COMMIT;
