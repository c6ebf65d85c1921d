-- Deploy scirag:schema/chunk_body to pg
-- requires: schema/corpus
-- requires: functions/deep_text
-- The chunk text without the "title\nsection path\n\n" prefix the loader puts before
-- it (issue 16). The prefix is built once (scirag_helpers.text.chunk_content) and is
-- kept in content, which is embedded and keyword-indexed (tsv) exactly as before;
-- every reader of "the body" (enrichment, consolidation, the answerer) reads this
-- column instead of stripping the prefix again.
BEGIN;

ALTER TABLE scirag.chunks ADD COLUMN body text;
COMMENT ON COLUMN scirag.chunks.body IS
  'the chunk text without its title/section-path prefix (content = prefix + blank line + body), written by the loader';

-- Rows written before this change: the stripping rule of scirag.chunk_body, once.
-- (A superuser deploys, so row-level security does not hide rows from the backfill.)
UPDATE scirag.chunks c
   SET body = scirag.chunk_body(c.content, d.title, c.section_path)
  FROM scirag.documents d
 WHERE d.id = c.document_id;

-- A writer that does not name the column (a loader older than this change, a
-- synthetic benchmark row) gets the same rule at insert, so body is never empty.
CREATE FUNCTION scirag.chunks_fill_body()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  NEW.body := scirag.chunk_body(NEW.content,
                                (SELECT d.title FROM scirag.documents d WHERE d.id = NEW.document_id),
                                NEW.section_path);
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.chunks_fill_body() IS
  'Trigger: fills chunks.body from content by the scirag.chunk_body rule when the writer gave none (writers older than the column).';
REVOKE ALL ON FUNCTION scirag.chunks_fill_body() FROM PUBLIC;

CREATE TRIGGER chunks_fill_body BEFORE INSERT ON scirag.chunks
  FOR EACH ROW WHEN (NEW.body IS NULL) EXECUTE FUNCTION scirag.chunks_fill_body();

ALTER TABLE scirag.chunks ALTER COLUMN body SET NOT NULL;

COMMIT;
