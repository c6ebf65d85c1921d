-- Revert scirag:functions/embed
BEGIN;
DROP FUNCTION scirag.embed_query(text), scirag.plpy_bootstrap();
COMMIT;
