-- Revert scirag:policies/role_ceilings
BEGIN;
ALTER POLICY own_ceiling ON scirag.role_ceilings USING (pg_has_role(current_user, role_name, 'MEMBER'));
COMMIT;
