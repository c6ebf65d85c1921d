-- Revert scirag:schema/document_metadata
BEGIN;
ALTER TABLE scirag.documents DROP CONSTRAINT documents_metadata_inferred_fields,
  DROP COLUMN metadata_inferred, DROP COLUMN arxiv_id;
COMMIT;
