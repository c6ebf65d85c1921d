-- Deploy scirag:policies/graph_rls
-- Row-level security and grants for the graph and community layers (DESIGN.md
-- section 5, reference methodology section 6.3). The scope predicate is the one
-- scirag.scope_predicate() writes for every evidence table; nothing here restates
-- a scope rule.
BEGIN;

DO $$
DECLARE
  t record;
BEGIN
  -- Evidence rows: visible exactly when their chunk's document is in scope.
  FOR t IN SELECT * FROM (VALUES
      ('kg_mentions', ''),
      ('kg_relationships', ''),
      -- a resolved citation shows the cited document's id: only when that document is visible too
      ('document_citations',
       ' AND (cited_document_id IS NULL OR EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = cited_document_id))'),
      -- a community's evidence chunk only while the community itself is visible
      ('kg_community_chunks',
       ' AND EXISTS (SELECT 1 FROM scirag.kg_communities k WHERE k.id = community_id)')) AS v(tab, extra)
  LOOP
    EXECUTE format('CREATE POLICY scope_read ON scirag.%I FOR SELECT TO PUBLIC USING (%s%s)',
                   t.tab, scirag.scope_predicate('document_id', true), t.extra);
    EXECUTE format('CREATE POLICY loader_all ON scirag.%I FOR ALL TO scirag_loader USING (true) WITH CHECK (true)', t.tab);
  END LOOP;
END $$;

-- An entity is visible only through evidence the caller may see, and only under
-- a name that evidence shows: a declared domain name (domain.yaml is public), or
-- a name that literally occurs as a visible surface. A tombstone keeps its
-- evidence pointers (original_entity_id), so it is judged by them.
CREATE POLICY scope_read ON scirag.kg_entities FOR SELECT TO PUBLIC USING (
  EXISTS (SELECT 1 FROM scirag.kg_mentions m
          WHERE m.entity_id = kg_entities.id AND (kg_entities.declared OR m.surface_key = kg_entities.name_key))
  OR EXISTS (SELECT 1 FROM scirag.kg_mentions m
             WHERE m.original_entity_id = kg_entities.id AND (kg_entities.declared OR m.surface_key = kg_entities.name_key)));
CREATE POLICY loader_all ON scirag.kg_entities FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

-- A community summary aggregates many documents before any caller is known: it
-- is visible exactly when every source document is in the caller's scope. The
-- license, source and retraction sets are kept in step with documents by
-- triggers (schema/graph), so the test needs no join; the scope functions run
-- once per query as initplans.
CREATE POLICY scope_read ON scirag.kg_communities FOR SELECT TO PUBLIC USING (
  licenses <@ ((SELECT scirag.scope_licenses())::text[])
  AND ((SELECT scirag.scope_sources()) IS NULL OR sources <@ ((SELECT scirag.scope_sources())::text[]))
  AND NOT (source_documents && ((SELECT scirag.scope_excluded_documents())::bigint[]))
  AND NOT (any_retracted AND (SELECT scirag.scope_exclude_retracted())));
CREATE POLICY loader_all ON scirag.kg_communities FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

CREATE POLICY scope_read ON scirag.kg_community_members FOR SELECT TO PUBLIC USING (
  EXISTS (SELECT 1 FROM scirag.kg_communities k WHERE k.id = community_id));
CREATE POLICY loader_all ON scirag.kg_community_members FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

-- Merge receipts name entities that may exist only in restricted text: no reader policy.
CREATE POLICY loader_all ON scirag.entity_resolution_audit FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

-- Options are not evidence: everyone reads them, the loader writes them.
CREATE POLICY read_all ON scirag.kg_options FOR SELECT TO PUBLIC USING (true);
CREATE POLICY loader_all ON scirag.kg_options FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

-- Privileges: readers read (entities without their alias list), the loader writes.
GRANT SELECT ON scirag.kg_mentions, scirag.kg_relationships, scirag.document_citations, scirag.kg_communities,
  scirag.kg_community_members, scirag.kg_community_chunks, scirag.kg_options TO scirag_reader;
GRANT SELECT (id, name, name_key, entity_type, declared, canonical_entity_id, extractor, created_at, merged_at)
  ON scirag.kg_entities TO scirag_reader;
GRANT SELECT, INSERT, UPDATE, DELETE ON scirag.kg_entities, scirag.kg_mentions, scirag.kg_relationships,
  scirag.document_citations, scirag.entity_resolution_audit, scirag.kg_communities, scirag.kg_community_members,
  scirag.kg_community_chunks, scirag.kg_options TO scirag_loader;
COMMIT;
