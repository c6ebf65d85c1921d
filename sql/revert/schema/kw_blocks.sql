-- Revert scirag:schema/kw_blocks
BEGIN;
DROP TABLE scirag.kw_blocks;
COMMIT;
