-- Verify scirag:schema/presets
DO $$
BEGIN
  ASSERT to_regclass('scirag.presets') IS NOT NULL, 'presets table missing';
  ASSERT (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'scirag.presets'::regclass) = 'scirag_owner',
         'presets is not owned by scirag_owner';
END $$;
