-- Deploy scirag:schema/corpus
-- Documents and their chunks. Every evidence table carries document_id, license,
-- source and retracted so that row-level security can filter it without a join and
-- so that it stays shardable by document_id (DESIGN.md section 12).
BEGIN;

CREATE TABLE scirag.ingest_runs (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  manifest     text NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  added        int NOT NULL DEFAULT 0,
  duplicate    int NOT NULL DEFAULT 0,
  failed       int NOT NULL DEFAULT 0,
  embedding_version text
);
ALTER TABLE scirag.ingest_runs OWNER TO scirag_owner;
COMMENT ON TABLE scirag.ingest_runs IS 'One row per scirag ingest invocation, with its summary counts';
COMMENT ON COLUMN scirag.ingest_runs.id IS 'run id';
COMMENT ON COLUMN scirag.ingest_runs.manifest IS 'manifest file the run read';
COMMENT ON COLUMN scirag.ingest_runs.started_at IS 'when the run started';
COMMENT ON COLUMN scirag.ingest_runs.finished_at IS 'when the run finished (NULL while running or if it crashed)';
COMMENT ON COLUMN scirag.ingest_runs.added IS 'documents stored';
COMMENT ON COLUMN scirag.ingest_runs.duplicate IS 'documents whose content was already stored';
COMMENT ON COLUMN scirag.ingest_runs.failed IS 'documents that failed (see ingest_reports)';
COMMENT ON COLUMN scirag.ingest_runs.embedding_version IS 'embedder the run used';

CREATE TABLE scirag.documents (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  external_id   text NOT NULL UNIQUE,
  title         text NOT NULL,
  authors       text[] NOT NULL DEFAULT '{}',
  year          int,
  journal       text,
  doi           text,
  license       scirag.license_class NOT NULL DEFAULT 'unknown',
  source        text NOT NULL DEFAULT 'unspecified',
  retracted     boolean NOT NULL DEFAULT false,
  content_hash  text NOT NULL UNIQUE,
  source_path   text,
  parser        text,
  pages         int,
  crossref      jsonb,
  ingest_run_id bigint REFERENCES scirag.ingest_runs (id) ON DELETE SET NULL,
  ingested_at   timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE scirag.documents OWNER TO scirag_owner;
COMMENT ON TABLE scirag.documents IS 'One row per ingested document: identity, citation metadata and redistribution rights';
COMMENT ON COLUMN scirag.documents.id IS 'internal document id';
COMMENT ON COLUMN scirag.documents.external_id IS 'the manifest id (stable, cited back to the user)';
COMMENT ON COLUMN scirag.documents.title IS 'document title';
COMMENT ON COLUMN scirag.documents.authors IS 'author names in order';
COMMENT ON COLUMN scirag.documents.year IS 'publication year';
COMMENT ON COLUMN scirag.documents.journal IS 'journal or venue (Crossref enrichment)';
COMMENT ON COLUMN scirag.documents.doi IS 'DOI without the https://doi.org/ prefix';
COMMENT ON COLUMN scirag.documents.license IS 'redistribution class from the manifest; missing means unknown';
COMMENT ON COLUMN scirag.documents.source IS 'where the document came from (a scope dimension)';
COMMENT ON COLUMN scirag.documents.retracted IS 'retraction status (Crossref); excluded from answers by default';
COMMENT ON COLUMN scirag.documents.content_hash IS 'SHA-256 of the normalised chunked text: the deduplication key';
COMMENT ON COLUMN scirag.documents.source_path IS 'file the document was parsed from (NULL for inline text)';
COMMENT ON COLUMN scirag.documents.parser IS 'parser that produced the block model (docling, pdfplumber, pypdf, markdown, html, text)';
COMMENT ON COLUMN scirag.documents.pages IS 'page count for paged formats';
COMMENT ON COLUMN scirag.documents.crossref IS 'sparse Crossref enrichment (journal, citation count, retraction notice)';
COMMENT ON COLUMN scirag.documents.ingest_run_id IS 'run that stored the document';
COMMENT ON COLUMN scirag.documents.ingested_at IS 'when the document was stored';

CREATE TABLE scirag.chunks (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  document_id        bigint NOT NULL REFERENCES scirag.documents (id) ON DELETE CASCADE,
  ordinal            int NOT NULL,
  parent_ordinal     int,
  kind               text NOT NULL CHECK (kind IN ('section', 'prose', 'table')),
  level              int NOT NULL,
  section_path       text NOT NULL DEFAULT '',
  heading            text,
  is_table           boolean NOT NULL DEFAULT false,
  content            text NOT NULL,
  token_count        int NOT NULL,
  line_start         int,
  line_end           int,
  page_start         int,
  page_end           int,
  license            scirag.license_class NOT NULL,
  source             text NOT NULL,
  retracted          boolean NOT NULL DEFAULT false,
  embedding          vector(:dim),
  embedding_version  text,
  tsv                tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  graph_extracted_at timestamptz,
  UNIQUE (document_id, ordinal),
  -- The parent link stays inside one document, so the key includes document_id.
  FOREIGN KEY (document_id, parent_ordinal) REFERENCES scirag.chunks (document_id, ordinal),
  CHECK (kind = 'section' OR embedding IS NOT NULL),
  CHECK (embedding IS NULL OR embedding_version IS NOT NULL)
);
ALTER TABLE scirag.chunks OWNER TO scirag_owner;
CREATE INDEX chunks_embedding_hnsw ON scirag.chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX chunks_tsv_gin ON scirag.chunks USING gin (tsv);
CREATE INDEX chunks_document ON scirag.chunks (document_id);
CREATE INDEX chunks_graph_pending ON scirag.chunks (id) WHERE graph_extracted_at IS NULL AND kind <> 'section';
COMMENT ON TABLE scirag.chunks IS
  'Retrieval units. prose and table chunks are embedded and searched; section chunks hold a heading with its whole section and are the parents used for enrichment and consolidation.';
COMMENT ON COLUMN scirag.chunks.id IS 'chunk id';
COMMENT ON COLUMN scirag.chunks.document_id IS 'owning document';
COMMENT ON COLUMN scirag.chunks.ordinal IS '0-based position in the document (a section precedes its content)';
COMMENT ON COLUMN scirag.chunks.parent_ordinal IS 'ordinal of the enclosing section chunk (NULL at top level)';
COMMENT ON COLUMN scirag.chunks.kind IS 'section (heading + whole section), prose or table';
COMMENT ON COLUMN scirag.chunks.level IS 'depth in the section hierarchy (a section has its heading level)';
COMMENT ON COLUMN scirag.chunks.section_path IS 'heading breadcrumb, e.g. "2 Methods > 2.1 Feedstock handling"';
COMMENT ON COLUMN scirag.chunks.heading IS 'heading text of a section chunk';
COMMENT ON COLUMN scirag.chunks.is_table IS 'true when the chunk is one intact table';
COMMENT ON COLUMN scirag.chunks.content IS 'text with the title and section path prepended, as embedded and searched';
COMMENT ON COLUMN scirag.chunks.token_count IS 'tokens in content (word and punctuation tokens)';
COMMENT ON COLUMN scirag.chunks.line_start IS 'first source line of the chunk';
COMMENT ON COLUMN scirag.chunks.line_end IS 'last source line of the chunk';
COMMENT ON COLUMN scirag.chunks.page_start IS 'first page (paged formats)';
COMMENT ON COLUMN scirag.chunks.page_end IS 'last page (paged formats)';
COMMENT ON COLUMN scirag.chunks.license IS 'copy of documents.license, kept in sync by trigger, so RLS needs no join';
COMMENT ON COLUMN scirag.chunks.source IS 'copy of documents.source, kept in sync by trigger';
COMMENT ON COLUMN scirag.chunks.retracted IS 'copy of documents.retracted, kept in sync by trigger';
COMMENT ON COLUMN scirag.chunks.embedding IS 'unit-length embedding of content (cosine HNSW index)';
COMMENT ON COLUMN scirag.chunks.embedding_version IS 'embedder identity; rows with a stale version are the ones to re-embed';
COMMENT ON COLUMN scirag.chunks.tsv IS 'English full-text vector of content (GIN index)';
COMMENT ON COLUMN scirag.chunks.graph_extracted_at IS 'when the graph builder last read the chunk; NULL = pending';

CREATE TABLE scirag.ingest_reports (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id      bigint NOT NULL REFERENCES scirag.ingest_runs (id) ON DELETE CASCADE,
  line_no     int NOT NULL,
  external_id text,
  path        text,
  status      text NOT NULL CHECK (status IN ('added', 'duplicate', 'failed')),
  reason      text,
  document_id bigint,
  chunks      int,
  seconds     real
);
ALTER TABLE scirag.ingest_reports OWNER TO scirag_owner;
COMMENT ON TABLE scirag.ingest_reports IS 'Per-document outcome of an ingest run: one broken file is a row here, not a crashed corpus';
COMMENT ON COLUMN scirag.ingest_reports.id IS 'report row id';
COMMENT ON COLUMN scirag.ingest_reports.run_id IS 'ingest run';
COMMENT ON COLUMN scirag.ingest_reports.line_no IS 'line of the manifest';
COMMENT ON COLUMN scirag.ingest_reports.external_id IS 'manifest id, when it could be read';
COMMENT ON COLUMN scirag.ingest_reports.path IS 'file named by the manifest line';
COMMENT ON COLUMN scirag.ingest_reports.status IS 'added, duplicate or failed';
COMMENT ON COLUMN scirag.ingest_reports.reason IS 'why it failed, or which document it duplicates';
COMMENT ON COLUMN scirag.ingest_reports.document_id IS 'stored (or duplicated) document id';
COMMENT ON COLUMN scirag.ingest_reports.chunks IS 'chunks stored';
COMMENT ON COLUMN scirag.ingest_reports.seconds IS 'time spent on the document';
COMMIT;
