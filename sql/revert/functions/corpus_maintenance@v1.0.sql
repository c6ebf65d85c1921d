-- Revert scirag:functions/corpus_maintenance
BEGIN;
DROP TRIGGER documents_sync_scope ON scirag.documents;
DROP TRIGGER kw_postings_stats_remove ON scirag.kw_postings;
DROP TRIGGER kw_postings_stats_add ON scirag.kw_postings;
DROP TRIGGER chunks_kw_index ON scirag.chunks;
DROP FUNCTION scirag.sync_document_scope(), scirag.kw_stats_remove(), scirag.kw_stats_add(), scirag.kw_index_new_chunks();
COMMIT;
