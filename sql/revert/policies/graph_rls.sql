-- Revert scirag:policies/graph_rls
BEGIN;
DO $$
DECLARE p record;
BEGIN
  FOR p IN SELECT policyname, tablename FROM pg_policies
           WHERE schemaname = 'scirag' AND tablename IN ('kg_options', 'kg_entities', 'kg_mentions', 'kg_relationships',
             'document_citations', 'entity_resolution_audit', 'kg_communities', 'kg_community_members', 'kg_community_chunks')
  LOOP
    EXECUTE format('DROP POLICY %I ON scirag.%I', p.policyname, p.tablename);
  END LOOP;
END $$;
REVOKE ALL ON scirag.kg_options, scirag.kg_entities, scirag.kg_mentions, scirag.kg_relationships,
  scirag.document_citations, scirag.entity_resolution_audit, scirag.kg_communities, scirag.kg_community_members,
  scirag.kg_community_chunks FROM scirag_reader, scirag_loader;
COMMIT;
