-- Revert scirag:schema/api_keys from pg
BEGIN;
DROP TABLE scirag.api_keys;
DROP FUNCTION scirag.api_keys_check_role();
COMMIT;
