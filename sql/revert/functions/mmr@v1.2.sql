-- Revert scirag:functions/mmr
BEGIN;
DROP FUNCTION scirag.mmr_select(bigint[], double precision[], int, double precision);
COMMIT;
