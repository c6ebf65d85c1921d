-- Revert scirag:functions/scope
BEGIN;
DROP FUNCTION scirag.current_scope(), scirag.scope_is_empty(), scirag.scope_exclude_retracted(),
  scirag.scope_excluded_documents(), scirag.scope_sources(), scirag.scope_licenses(),
  scirag.scope_ceiling(), scirag.parse_list(text);
DROP TRIGGER documents_sync_keys ON scirag.documents;
DROP TABLE scirag.document_keys;
DROP FUNCTION scirag.sync_document_keys();
COMMIT;
