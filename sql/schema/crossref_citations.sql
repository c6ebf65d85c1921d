-- Deploy scirag:schema/crossref_citations
-- References found by Crossref enrichment (reference[].DOI) have no chunk: the
-- citation belongs to the document as a whole. chunk_id becomes optional, origin
-- says where a citation was found, and the scope columns of a chunk-less citation
-- come from its citing document. A foreign key to the citing document (same
-- document_id, so co-located under Citus) removes its citations with it; the cited
-- document keeps no foreign key (it may live on another shard, DESIGN.md section 12).
BEGIN;

ALTER TABLE scirag.document_citations ALTER COLUMN chunk_id DROP NOT NULL;
ALTER TABLE scirag.document_citations
  ADD COLUMN origin text NOT NULL DEFAULT 'text' CHECK (origin IN ('text', 'crossref'));
COMMENT ON COLUMN scirag.document_citations.origin IS
  'where the reference was found: text (a DOI in a chunk, graph extraction) or crossref (the Crossref reference list)';
COMMENT ON COLUMN scirag.document_citations.chunk_id IS
  'chunk in which the reference was found (NULL for a reference from the Crossref record)';
ALTER TABLE scirag.document_citations
  ADD CONSTRAINT document_citations_document_fk FOREIGN KEY (document_id)
  REFERENCES scirag.documents (id) ON DELETE CASCADE;
ALTER TABLE scirag.document_citations
  ADD CONSTRAINT document_citations_origin_chunk CHECK (origin = 'crossref' OR chunk_id IS NOT NULL);

-- Resolving a DOI to a corpus document (citations, doctor's duplicate check) by index.
CREATE INDEX documents_doi_lower ON scirag.documents (lower(doi)) WHERE doi IS NOT NULL;

CREATE OR REPLACE FUNCTION scirag.document_citations_fill_scope()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  c record;
BEGIN
  -- As kg_fill_scope: the scope columns are always the evidence's, whatever the
  -- writer passed. A chunk-less (Crossref) citation takes them from its document.
  IF NEW.chunk_id IS NOT NULL THEN
    SELECT ch.document_id, ch.license, ch.source, ch.retracted INTO c
    FROM scirag.chunks ch WHERE ch.id = NEW.chunk_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'scirag: chunk % does not exist or is not visible to %', NEW.chunk_id, current_user;
    END IF;
  ELSE
    SELECT d.id AS document_id, d.license, d.source, d.retracted INTO c
    FROM scirag.documents d WHERE d.id = NEW.document_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'scirag: document % does not exist or is not visible to %', NEW.document_id, current_user
        USING HINT = 'a citation without chunk_id needs the citing document_id';
    END IF;
  END IF;
  NEW.document_id := c.document_id;
  NEW.license := c.license;
  NEW.source := c.source;
  NEW.retracted := c.retracted;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.document_citations_fill_scope() IS
  'Row trigger: copies document_id, license, source and retracted from the evidence chunk, or for a chunk-less (Crossref) citation from its citing document.';
REVOKE EXECUTE ON FUNCTION scirag.document_citations_fill_scope() FROM PUBLIC;

DROP TRIGGER document_citations_fill_scope ON scirag.document_citations;
CREATE TRIGGER document_citations_fill_scope BEFORE INSERT OR UPDATE OF chunk_id, document_id
  ON scirag.document_citations FOR EACH ROW EXECUTE FUNCTION scirag.document_citations_fill_scope();
COMMIT;
