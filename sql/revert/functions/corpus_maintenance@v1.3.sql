-- Revert scirag:functions/corpus_maintenance (to its @v1.2 version: kw_flush with the per-posting subquery)
\ir ../../functions/corpus_maintenance@v1.2.sql
BEGIN;
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
