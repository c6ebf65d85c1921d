-- Revert scirag:functions/enrich: the previous version. Its enrich_chunks has
-- another result type (no body), which CREATE OR REPLACE cannot change: dropped
-- first, in the same transaction (the included script's BEGIN only warns).
BEGIN;
DROP FUNCTION scirag.enrich_chunks(bigint[], int, int);
\ir ../../functions/enrich@v1.1.sql
