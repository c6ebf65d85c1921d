-- Revert scirag:functions/citations (back to functions/citations@v1.3)
\ir ../../functions/citations@v1.3.sql
BEGIN;
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
