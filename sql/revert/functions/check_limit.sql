-- Revert scirag:functions/check_limit
BEGIN;
DROP FUNCTION scirag.check_limit(int, text, text, int);
COMMIT;
