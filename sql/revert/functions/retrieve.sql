-- Revert scirag:functions/retrieve: the released version (functions/retrieve@v1.2) again,
-- then the reader wall back (CREATE OR REPLACE resets it; functions/reader_wall_apply).
\ir ../../functions/retrieve@v1.2.sql
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
