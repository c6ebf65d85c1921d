-- Verify scirag:schema/kw_blocks
DO $$
BEGIN
  ASSERT to_regclass('scirag.kw_blocks') IS NOT NULL, 'kw_blocks missing';
  ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'scirag.kw_blocks'::regclass),
         'kw_blocks must have forced row-level security';
  ASSERT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'scirag.kw_blocks'::regclass AND polname = 'scope_read'),
         'kw_blocks scope policy missing';
END $$;
