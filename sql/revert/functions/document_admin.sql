-- Revert scirag:functions/document_admin
BEGIN;
DROP FUNCTION scirag.document_set(text, jsonb);
DROP FUNCTION scirag.document_clear(bigint);
DROP FUNCTION scirag.document_delete(text);
DROP FUNCTION scirag.document_counts(bigint);
DROP FUNCTION scirag.document_entities(bigint);
DROP FUNCTION scirag.document_drop_orphans(bigint[]);
DROP FUNCTION scirag.document_ref(text, text);
COMMIT;
