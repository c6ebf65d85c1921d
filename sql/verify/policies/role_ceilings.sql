-- Verify scirag:policies/role_ceilings
DO $$
BEGIN
  ASSERT (SELECT pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p
          WHERE p.polrelid = 'scirag.role_ceilings'::regclass AND p.polname = 'own_ceiling') LIKE '%role_oid%',
         'own_ceiling must match by role OID';
END $$;
