-- Revert scirag:functions/reader_api
BEGIN;
DROP FUNCTION scirag.entities_visible(bigint[]), scirag.documents_all_visible(bigint[]), scirag.external_ids_all_visible(text[]), scirag.documents_visible(text), scirag.chunk_get(bigint), scirag.chunk_neighbours(bigint, int),
  scirag.document_outline(bigint);
COMMIT;
