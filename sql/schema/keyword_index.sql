-- Deploy scirag:schema/keyword_index
-- BM25 postings and term statistics. Statistics are kept per (license, source)
-- class and carry those columns, so row-level security shows a caller only the
-- classes in its scope: the document frequencies a caller's BM25 uses are sums
-- over classes it may see, and never reveal which words restricted text contains.
BEGIN;
CREATE TABLE scirag.kw_postings (
  lexeme      text NOT NULL,
  chunk_id    bigint NOT NULL REFERENCES scirag.chunks (id) ON DELETE CASCADE,
  document_id bigint NOT NULL,
  license     scirag.license_class NOT NULL,
  source      text NOT NULL,
  retracted   boolean NOT NULL DEFAULT false,
  tf          int NOT NULL,
  dl          int NOT NULL,
  PRIMARY KEY (lexeme, chunk_id)
);
ALTER TABLE scirag.kw_postings OWNER TO scirag_owner;
CREATE INDEX kw_postings_chunk ON scirag.kw_postings (chunk_id);
COMMENT ON TABLE scirag.kw_postings IS 'Inverted index for BM25: one row per (lexeme, chunk), built from chunks.tsv by trigger';
COMMENT ON COLUMN scirag.kw_postings.lexeme IS 'English-stemmed lexeme (to_tsvector(''english''))';
COMMENT ON COLUMN scirag.kw_postings.chunk_id IS 'chunk containing the lexeme';
COMMENT ON COLUMN scirag.kw_postings.document_id IS 'document of the chunk (scope and sharding key)';
COMMENT ON COLUMN scirag.kw_postings.license IS 'license class of the document (scope)';
COMMENT ON COLUMN scirag.kw_postings.source IS 'source of the document (scope)';
COMMENT ON COLUMN scirag.kw_postings.retracted IS 'retraction status of the document (scope)';
COMMENT ON COLUMN scirag.kw_postings.tf IS 'occurrences of the lexeme in the chunk';
COMMENT ON COLUMN scirag.kw_postings.dl IS 'chunk length in lexeme occurrences';

CREATE TABLE scirag.kw_term_stats (
  license scirag.license_class NOT NULL,
  source  text NOT NULL,
  lexeme  text NOT NULL,
  df      int NOT NULL CHECK (df >= 0),
  PRIMARY KEY (lexeme, license, source)
);
ALTER TABLE scirag.kw_term_stats OWNER TO scirag_owner;
COMMENT ON TABLE scirag.kw_term_stats IS 'Document frequency of each lexeme per (license, source) class; a caller sums the classes in its scope';
COMMENT ON COLUMN scirag.kw_term_stats.license IS 'license class';
COMMENT ON COLUMN scirag.kw_term_stats.source IS 'source';
COMMENT ON COLUMN scirag.kw_term_stats.lexeme IS 'lexeme';
COMMENT ON COLUMN scirag.kw_term_stats.df IS 'chunks of this class containing the lexeme';

CREATE TABLE scirag.kw_class_stats (
  license  scirag.license_class NOT NULL,
  source   text NOT NULL,
  n_chunks bigint NOT NULL CHECK (n_chunks >= 0),
  sum_dl   bigint NOT NULL CHECK (sum_dl >= 0),
  PRIMARY KEY (license, source)
);
ALTER TABLE scirag.kw_class_stats OWNER TO scirag_owner;
COMMENT ON TABLE scirag.kw_class_stats IS 'Chunk count and total length per (license, source) class, for BM25 N and average length';
COMMENT ON COLUMN scirag.kw_class_stats.license IS 'license class';
COMMENT ON COLUMN scirag.kw_class_stats.source IS 'source';
COMMENT ON COLUMN scirag.kw_class_stats.n_chunks IS 'indexed chunks of this class';
COMMENT ON COLUMN scirag.kw_class_stats.sum_dl IS 'sum of their lengths';
COMMIT;
