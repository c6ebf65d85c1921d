-- Revert scirag:schema/core
BEGIN;
DO $$ BEGIN
  EXECUTE format('ALTER DATABASE %I RESET scirag.licenses', current_database());
END $$;
DROP SCHEMA scirag CASCADE;
COMMIT;
