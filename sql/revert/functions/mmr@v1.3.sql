-- Revert scirag:functions/mmr: the released version (functions/mmr@v1.2) again, then the
-- reader wall back (CREATE OR REPLACE resets it; functions/reader_wall_apply).
\ir ../../functions/mmr@v1.2.sql
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
