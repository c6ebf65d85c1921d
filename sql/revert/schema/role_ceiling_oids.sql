-- Revert scirag:schema/role_ceiling_oids
BEGIN;
DROP TRIGGER role_ceilings_set_oid ON scirag.role_ceilings;
DROP FUNCTION scirag.role_ceilings_set_oid();
ALTER TABLE scirag.role_ceilings DROP COLUMN role_oid;
COMMIT;
