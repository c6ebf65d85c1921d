-- Deploy scirag:schema/role_ceiling_oids
-- A ceiling keyed by role *name* passes to whoever later gets that name (DROP ROLE p;
-- CREATE ROLE p), and a row naming a dropped role made pg_has_role(name) raise for
-- every reader. The row now remembers the OID of the role it was written for; scope
-- and the policy match on the OID and skip rows whose role is gone or renamed.
BEGIN;

ALTER TABLE scirag.role_ceilings ADD COLUMN role_oid oid;
COMMENT ON COLUMN scirag.role_ceilings.role_oid IS
  'OID of the role the ceiling was written for (set by trigger from role_name); a row whose role was dropped, or re-created under the same name, applies to nobody';

CREATE OR REPLACE FUNCTION scirag.role_ceilings_set_oid()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- to_regrole: a clear error of our own instead of a cast failure
  NEW.role_oid := to_regrole(quote_ident(NEW.role_name))::oid;
  IF NEW.role_oid IS NULL THEN
    RAISE EXCEPTION 'scirag.role_ceilings: role "%" does not exist', NEW.role_name
      USING ERRCODE = '42704', HINT = 'create the role first; a ceiling applies to an existing role only';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.role_ceilings_set_oid() IS 'Row trigger: role_ceilings.role_oid follows role_name (the role must exist)';
CREATE TRIGGER role_ceilings_set_oid BEFORE INSERT OR UPDATE OF role_name, role_oid ON scirag.role_ceilings
  FOR EACH ROW EXECUTE FUNCTION scirag.role_ceilings_set_oid();

-- Existing rows: the role of that name now (rows naming a dropped role stay NULL: inert).
UPDATE scirag.role_ceilings SET role_oid = to_regrole(quote_ident(role_name))::oid
WHERE to_regrole(quote_ident(role_name)) IS NOT NULL;
COMMIT;
