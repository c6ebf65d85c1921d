-- Deploy scirag:policies/function_privileges
-- PostgreSQL lets PUBLIC execute every new function. No scirag function is meant for
-- PUBLIC: each script grants EXECUTE to the scirag roles that call it, and a reader
-- reaches evidence only through the reader API (functions/reader_wall_apply). Up to
-- this change `scirag db init` revoked PUBLIC's EXECUTE in Python after every deploy;
-- the privilege now lives here, in the plan, where a deploy by sqitch alone gets it too.
-- A later change that creates a function revokes PUBLIC's EXECUTE in its own script
-- (REVOKE ALL ON FUNCTION ... FROM PUBLIC beside its GRANT); this change's verify and
-- tests/pgtap/01_rls_sweep.sql fail for any scirag function PUBLIC may still execute.
-- (Default privileges cannot do it for the schema alone: a per-schema ALTER DEFAULT
-- PRIVILEGES cannot revoke what PostgreSQL grants PUBLIC, and a database-wide one
-- would also close the functions of extensions such as pgTAP.)
BEGIN;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA scirag FROM PUBLIC;
COMMIT;
