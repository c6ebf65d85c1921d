-- Revert scirag:schema/chunk_body from pg
BEGIN;
DROP TRIGGER chunks_fill_body ON scirag.chunks;
DROP FUNCTION scirag.chunks_fill_body();
ALTER TABLE scirag.chunks DROP COLUMN body;
COMMIT;
