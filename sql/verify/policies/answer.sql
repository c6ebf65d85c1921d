-- Verify scirag:policies/answer
DO $$
DECLARE t regclass;
BEGIN
  FOREACH t IN ARRAY ARRAY['scirag.prompt_templates', 'scirag.answer_intents']::regclass[] LOOP
    ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = t),
           format('%s: row-level security not forced', t);
    ASSERT (SELECT array_agg(polname::text ORDER BY polname) FROM pg_policy WHERE polrelid = t)
           = ARRAY['loader_all', 'read_all'], format('%s: policies are not exactly loader_all and read_all', t);
    ASSERT has_table_privilege('scirag_reader', t, 'SELECT') AND NOT has_table_privilege('scirag_reader', t, 'UPDATE'),
           format('%s: readers must read and not write', t);
    ASSERT has_table_privilege('scirag_loader', t, 'UPDATE'), format('%s: the loader must write', t);
  END LOOP;
END $$;
