-- Revert scirag:functions/consolidate: back to functions/consolidate@v1.3, then the reader wall back
\ir ../../functions/consolidate@v1.3.sql
BEGIN;
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
