-- Revert scirag:functions/enrich: back to functions/enrich@v1.3 (which drops and creates
-- enrich_chunks again), then the reader wall back
\ir ../../functions/enrich@v1.3.sql
BEGIN;
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
