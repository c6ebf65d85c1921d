-- Revert scirag:schema/kw_blocks_packed
BEGIN;
ALTER TABLE scirag.kw_blocks DROP COLUMN packed;
DROP FUNCTION scirag.kw_pack(bigint[], smallint[], int[]);
COMMIT;
