-- Revert scirag:functions/retrieve_config_resolved: scirag.retrieve_config as
-- functions/retrieve_config_preset defines it, and no four-argument signature.
\ir ../../functions/retrieve_config_preset.sql
BEGIN;
DROP FUNCTION scirag.retrieve_config(text, int, jsonb, jsonb);
COMMIT;
