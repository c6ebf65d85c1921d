-- Revert scirag:policies/citation_unresolved (back to the policy of policies/graph_rls)
BEGIN;
DROP POLICY scope_read ON scirag.document_citations;
DO $$
BEGIN
  EXECUTE format('CREATE POLICY scope_read ON scirag.document_citations FOR SELECT TO PUBLIC USING (%s%s)',
                 scirag.scope_predicate('document_id', true),
                 ' AND (cited_document_id IS NULL OR EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = cited_document_id))');
END $$;
COMMIT;
