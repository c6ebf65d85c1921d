-- Revert scirag:schema/crossref_citations
BEGIN;
DROP TRIGGER document_citations_fill_scope ON scirag.document_citations;
CREATE TRIGGER document_citations_fill_scope BEFORE INSERT OR UPDATE OF chunk_id
  ON scirag.document_citations FOR EACH ROW EXECUTE FUNCTION scirag.kg_fill_scope();
DROP FUNCTION scirag.document_citations_fill_scope();
DROP INDEX scirag.documents_doi_lower;
-- Crossref citations have no chunk and cannot exist in the previous shape.
DELETE FROM scirag.document_citations WHERE chunk_id IS NULL;
ALTER TABLE scirag.document_citations DROP CONSTRAINT document_citations_origin_chunk;
ALTER TABLE scirag.document_citations DROP CONSTRAINT document_citations_document_fk;
ALTER TABLE scirag.document_citations DROP COLUMN origin;
ALTER TABLE scirag.document_citations ALTER COLUMN chunk_id SET NOT NULL;
COMMENT ON COLUMN scirag.document_citations.chunk_id IS 'chunk in which the reference was found';
COMMIT;
