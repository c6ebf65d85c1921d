-- Verify scirag:policies/graph_rls
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['kg_entities', 'kg_mentions', 'kg_relationships', 'document_citations',
                           'kg_communities', 'kg_community_members', 'kg_community_chunks'] LOOP
    ASSERT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'scirag' AND tablename = t AND policyname = 'scope_read'),
      format('scirag.%s has no scope_read policy', t);
    ASSERT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'scirag' AND tablename = t AND policyname = 'loader_all'),
      format('scirag.%s has no loader_all policy', t);
    ASSERT NOT has_table_privilege('scirag_reader', 'scirag.' || t, 'INSERT'), format('reader can write scirag.%s', t);
  END LOOP;
  ASSERT NOT has_column_privilege('scirag_reader', 'scirag.kg_entities', 'aliases', 'SELECT'), 'reader can read entity aliases';
  ASSERT NOT has_table_privilege('scirag_reader', 'scirag.entity_resolution_audit', 'SELECT'), 'reader can read merge receipts';
  ASSERT has_table_privilege('scirag_loader', 'scirag.kg_relationships', 'INSERT'), 'loader cannot write relationships';
END $$;
