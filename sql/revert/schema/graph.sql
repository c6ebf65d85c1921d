-- Revert scirag:schema/graph
BEGIN;
-- the graph this change held is gone: every chunk is pending again for scirag graph extract
UPDATE scirag.chunks SET graph_extracted_at = NULL WHERE graph_extracted_at IS NOT NULL;
DROP TRIGGER documents_drop_graph_communities ON scirag.documents;
DROP TRIGGER documents_sync_graph_scope ON scirag.documents;
DROP TABLE scirag.kg_community_chunks, scirag.kg_community_members, scirag.kg_communities,
  scirag.entity_resolution_audit, scirag.document_citations, scirag.kg_relationships,
  scirag.kg_mentions, scirag.kg_entities, scirag.kg_options;
DROP FUNCTION scirag.kg_drop_document_communities();
DROP FUNCTION scirag.kg_sync_document_scope();
DROP FUNCTION scirag.kg_fill_scope();
DROP FUNCTION scirag.kg_normalize(text);
COMMIT;
