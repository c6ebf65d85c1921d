-- Deploy scirag:policies/role_ceilings
-- The own_ceiling policy called pg_has_role(current_user, role_name): a row naming a
-- dropped role raised "role does not exist" for every reader. By OID, a dropped role
-- is simply no match, and a row whose name now belongs to another role applies to nobody.
BEGIN;
ALTER POLICY own_ceiling ON scirag.role_ceilings
  USING (to_regrole(quote_ident(role_name)) = role_oid AND pg_has_role(current_user, role_oid, 'MEMBER'));
COMMIT;
