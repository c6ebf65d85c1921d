-- Revert scirag:functions/reader_wall_apply
BEGIN;
DROP FUNCTION scirag.apply_reader_wall();
COMMIT;
