-- Revert scirag:schema/presets
BEGIN;
DROP TABLE scirag.presets;
COMMIT;
