-- Deploy scirag:schema/document_metadata
-- `scirag ingest FOLDER` fills citation fields the manifest leaves out from the file
-- itself (PDF metadata and page-1 layout: python/loader/scirag/pdfmeta.py). Those are
-- guesses: metadata_inferred names each field that was guessed, so a Crossref
-- enrichment or a later manifest line knows what it may overwrite and a reader can
-- tell a stated title from a guessed one. arxiv_id is the preprint identity (also
-- the key for arXiv and Crossref look-ups).
BEGIN;

ALTER TABLE scirag.documents
  ADD COLUMN arxiv_id text,
  ADD COLUMN metadata_inferred text[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT documents_metadata_inferred_fields
    CHECK (metadata_inferred <@ ARRAY['title', 'authors', 'year', 'doi', 'arxiv_id']::text[]);
COMMENT ON COLUMN scirag.documents.arxiv_id IS 'arXiv identifier without version (e.g. 2107.05407), from the manifest or read from the file';
COMMENT ON COLUMN scirag.documents.metadata_inferred IS
  'citation fields (title, authors, year, doi, arxiv_id) guessed from the file rather than stated by the manifest; enrichment or a manifest may correct them';
COMMENT ON CONSTRAINT documents_metadata_inferred_fields ON scirag.documents IS
  'metadata_inferred may only name citation fields';

COMMIT;
