-- Deploy scirag:schema/kw_all_postings
-- Every BM25 posting in one shape, wherever it lives (a fresh kw_postings row or an
-- entry of a compacted kw_blocks array), for checks, repairs and tests that need the
-- whole index; search_keyword reads the two tables itself. security_invoker: row-level
-- security of the caller applies to both tables (and to chunks, for the block entries'
-- document and retraction).
BEGIN;
CREATE VIEW scirag.kw_all_postings WITH (security_invoker = true) AS
  SELECT p.lexeme, p.chunk_id, p.document_id, p.license, p.source, p.retracted, p.tf, p.dl
  FROM scirag.kw_postings p
  UNION ALL
  SELECT b.lexeme, x.chunk_id, c.document_id, b.license, b.source, c.retracted, x.tf::int, x.dl
  FROM scirag.kw_blocks b
  CROSS JOIN LATERAL unnest(b.chunk_ids, b.tfs, b.dls) AS x(chunk_id, tf, dl)
  JOIN scirag.chunks c ON c.id = x.chunk_id;
ALTER VIEW scirag.kw_all_postings OWNER TO scirag_owner;
COMMENT ON VIEW scirag.kw_all_postings IS 'Every BM25 posting, fresh (kw_postings) or compacted (kw_blocks), one row per (lexeme, chunk)';
COMMENT ON COLUMN scirag.kw_all_postings.lexeme IS 'English-stemmed lexeme';
COMMENT ON COLUMN scirag.kw_all_postings.chunk_id IS 'chunk containing the lexeme';
COMMENT ON COLUMN scirag.kw_all_postings.document_id IS 'document of the chunk';
COMMENT ON COLUMN scirag.kw_all_postings.license IS 'license class the posting is filed under';
COMMENT ON COLUMN scirag.kw_all_postings.source IS 'source the posting is filed under';
COMMENT ON COLUMN scirag.kw_all_postings.retracted IS 'retraction status of the document';
COMMENT ON COLUMN scirag.kw_all_postings.tf IS 'occurrences of the lexeme in the chunk';
COMMENT ON COLUMN scirag.kw_all_postings.dl IS 'chunk length in lexeme occurrences';
REVOKE ALL ON scirag.kw_all_postings FROM PUBLIC;
GRANT SELECT ON scirag.kw_all_postings TO scirag_reader, scirag_loader;
COMMIT;
