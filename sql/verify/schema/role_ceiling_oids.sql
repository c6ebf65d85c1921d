-- Verify scirag:schema/role_ceiling_oids
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'scirag.role_ceilings'::regclass
                 AND attname = 'role_oid' AND NOT attisdropped), 'role_ceilings.role_oid missing';
  ASSERT NOT EXISTS (SELECT 1 FROM scirag.role_ceilings c JOIN pg_roles r ON r.rolname = c.role_name
                     WHERE c.role_oid IS DISTINCT FROM r.oid), 'role_ceilings.role_oid not filled';
END $$;
