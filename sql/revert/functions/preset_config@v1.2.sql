-- Revert scirag:functions/preset_config
BEGIN;
DROP FUNCTION scirag.preset_check(jsonb), scirag.preset_validate(jsonb), scirag.preset_defaults(),
  scirag.preset_schema();
COMMIT;
