-- Verify scirag:policies/presets
DO $$
BEGIN
  ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'scirag.presets'::regclass),
         'row-level security is not enabled and forced on presets';
  ASSERT (SELECT count(*) FROM pg_policy WHERE polrelid = 'scirag.presets'::regclass) = 2, 'presets policies missing';
  ASSERT has_table_privilege('scirag_reader', 'scirag.presets', 'SELECT'), 'readers cannot read presets';
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.presets', 'INSERT'), 'readers can write presets';
END $$;
