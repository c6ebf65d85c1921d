-- Revert scirag:functions/preset_config: the released version (functions/preset_config@v1.2)
-- again, then drop what the rework added (nothing released calls it), and put the
-- reader wall back (CREATE OR REPLACE resets it; functions/reader_wall_apply).
\ir ../../functions/preset_config@v1.2.sql
DROP FUNCTION scirag.preset_option_spec(text);
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
