-- Deploy scirag:schema/api_role
-- The security wall (issue 13, README "Threat model and residual limits"): readers hold
-- no privilege on evidence tables, so EXPLAIN, pg_stats and plain SELECT show them
-- nothing; they reach evidence only through SECURITY DEFINER API functions owned by
-- this NOLOGIN role. scirag_api owns no table, so the FORCEd row-level security
-- policies apply to it, keyed on the caller's ceiling (scirag.scope_role()). Its grants
-- and the functions it owns are set by policies/reader_wall. Nobody is granted
-- membership: a member could act as scirag_api and so as every reader at once.
BEGIN;
DO $$
BEGIN
  -- cluster-wide, like the group roles of schema/roles: another scirag database may have made it
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'scirag_api') THEN
    CREATE ROLE scirag_api NOLOGIN NOINHERIT;
  END IF;
END $$;
COMMENT ON ROLE scirag_api IS
  'scirag: owns the reader API functions (SECURITY DEFINER) and reads evidence for them under row-level security; owns no table; NOLOGIN, no members';
GRANT USAGE ON SCHEMA scirag TO scirag_api;
COMMIT;
