-- Verify scirag:schema/graph
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['kg_options', 'kg_entities', 'kg_mentions', 'kg_relationships', 'document_citations',
                           'entity_resolution_audit', 'kg_communities', 'kg_community_members', 'kg_community_chunks'] LOOP
    ASSERT to_regclass('scirag.' || t) IS NOT NULL, format('table scirag.%s missing', t);
    ASSERT (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = ('scirag.' || t)::regclass),
      format('scirag.%s: row-level security not enabled and forced', t);
    ASSERT (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = ('scirag.' || t)::regclass) = 'scirag_owner',
      format('scirag.%s is not owned by scirag_owner', t);
  END LOOP;
  ASSERT scirag.kg_normalize('Emission  Factors, PM2.5') = 'emission factor pm2 5', 'kg_normalize changed';
  ASSERT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'scirag.documents'::regclass
          AND tgname IN ('documents_sync_graph_scope', 'documents_drop_graph_communities')) = 2,
    'document triggers for graph scope missing';
END $$;
