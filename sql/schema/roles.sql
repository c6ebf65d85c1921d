-- Deploy scirag:schema/roles
-- Group roles (NOLOGIN). Login users are granted membership; no login role owns a table.
--   scirag_owner  owns every scirag table (never granted to a login user by scirag)
--   scirag_loader writes documents and chunks (the loader CLI runs as it)
--   scirag_reader reads through row-level security, bounded by its ceiling
BEGIN;
DO $$
DECLARE r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['scirag_owner', 'scirag_loader', 'scirag_reader'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      EXECUTE format('CREATE ROLE %I NOLOGIN', r);
    END IF;
  END LOOP;
END $$;
COMMIT;
