-- Verify scirag:policies/rls
DO $$
DECLARE bad text;
BEGIN
  SELECT string_agg(c.relname, ', ') INTO bad
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'scirag' AND c.relkind = 'r' AND c.relname <> 'settings'
    AND NOT (c.relrowsecurity AND c.relforcerowsecurity);
  ASSERT bad IS NULL, format('tables without forced RLS: %s', bad);
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.chunks', 'INSERT'), 'reader can write chunks';
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.role_ceilings', 'UPDATE'), 'reader can edit ceilings';
END $$;
