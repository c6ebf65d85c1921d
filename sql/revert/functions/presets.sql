-- Revert scirag:functions/presets
BEGIN;
DROP FUNCTION scirag.preset_list(), scirag.preset_delete(text), scirag.preset_set(text, jsonb, text),
  scirag.preset_get(text);
COMMIT;
