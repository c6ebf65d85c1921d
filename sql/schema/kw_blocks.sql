-- Deploy scirag:schema/kw_blocks
-- Compact BM25 postings (DESIGN.md section 8): for each lexeme and (license, source)
-- class, its postings ordered by impact (best first) and cut into blocks of at most
-- 128, each block carrying the largest term frequency and the shortest chunk length
-- it holds. Those two numbers bound any posting's BM25 term score in the block, for
-- any caller's N and average length, so search_keyword can skip whole blocks and
-- terms that cannot reach its current n-th best score (MaxScore with block-max
-- bounds) and still return the exact top n. Arrays take about 14 bytes a posting
-- where a row took over 100. New chunks' postings first land in kw_postings (one
-- row each, cheap to insert); scirag.kw_compact() moves them into blocks.
-- The rows carry their class, so row-level security shows a caller only the blocks
-- of classes in its scope, as for kw_term_stats; document-level narrowing
-- (scirag.exclude_documents, exclude_retracted) applies when search_keyword checks
-- each candidate against scirag.chunks.
BEGIN;
CREATE TABLE scirag.kw_blocks (
  lexeme    text NOT NULL,
  license   scirag.license_class NOT NULL,
  source    text NOT NULL,
  block     int NOT NULL CHECK (block >= 0),
  max_tf    int NOT NULL CHECK (max_tf > 0),
  min_dl    int NOT NULL CHECK (min_dl > 0),
  chunk_ids bigint[] NOT NULL,
  tfs       smallint[] NOT NULL,
  dls       int[] NOT NULL,
  PRIMARY KEY (lexeme, license, source, block),
  CHECK (cardinality(chunk_ids) BETWEEN 1 AND 128
         AND cardinality(tfs) = cardinality(chunk_ids) AND cardinality(dls) = cardinality(chunk_ids))
);
ALTER TABLE scirag.kw_blocks OWNER TO scirag_owner;
COMMENT ON TABLE scirag.kw_blocks IS
  'Compacted BM25 postings: per lexeme and (license, source) class, impact-ordered blocks of up to 128 postings with a score bound (max_tf, min_dl); filled by scirag.kw_compact()';
COMMENT ON COLUMN scirag.kw_blocks.lexeme IS 'English-stemmed lexeme';
COMMENT ON COLUMN scirag.kw_blocks.license IS 'license class of the postings'' documents (scope)';
COMMENT ON COLUMN scirag.kw_blocks.source IS 'source of the postings'' documents (scope)';
COMMENT ON COLUMN scirag.kw_blocks.block IS 'block number within (lexeme, license, source); 0 holds the highest-impact postings';
COMMENT ON COLUMN scirag.kw_blocks.max_tf IS 'largest term frequency in the block (upper bound of the BM25 term score, with min_dl)';
COMMENT ON COLUMN scirag.kw_blocks.min_dl IS 'shortest chunk length in the block';
COMMENT ON COLUMN scirag.kw_blocks.chunk_ids IS 'chunks holding the lexeme, by descending impact';
COMMENT ON COLUMN scirag.kw_blocks.tfs IS 'term frequency of each chunk (parallel to chunk_ids)';
COMMENT ON COLUMN scirag.kw_blocks.dls IS 'length of each chunk in lexeme occurrences (parallel to chunk_ids)';

ALTER TABLE scirag.kw_blocks ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.kw_blocks FORCE ROW LEVEL SECURITY;
-- The one scope predicate (policies/rls), at class level like the statistics tables.
DO $$
BEGIN
  EXECUTE format('CREATE POLICY scope_read ON scirag.kw_blocks FOR SELECT TO PUBLIC USING (%s)',
                 scirag.scope_predicate(NULL, false));
END $$;
CREATE POLICY loader_all ON scirag.kw_blocks FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
REVOKE ALL ON scirag.kw_blocks FROM PUBLIC;
GRANT SELECT ON scirag.kw_blocks TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.kw_blocks TO scirag_loader;
COMMIT;
