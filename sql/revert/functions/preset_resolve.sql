-- Revert scirag:functions/preset_resolve
BEGIN;
DROP FUNCTION scirag.preset_resolve(text);
COMMIT;
