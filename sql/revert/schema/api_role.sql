-- Revert scirag:schema/api_role
-- The role is cluster-wide: another scirag database may still use it, then it stays.
BEGIN;
REVOKE ALL ON SCHEMA scirag FROM scirag_api;
DO $$
BEGIN
  DROP ROLE IF EXISTS scirag_api;
EXCEPTION WHEN dependent_objects_still_exist THEN
  RAISE NOTICE 'role scirag_api is still used by another database; kept';
END $$;
COMMIT;
