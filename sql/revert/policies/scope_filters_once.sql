-- Revert scirag:policies/scope_filters_once: the policies as policies/scope_filters made them
BEGIN;

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('chunks'), ('kw_postings'), ('kg_mentions'), ('kg_relationships'),
      ('document_citations'), ('kg_community_chunks')) AS v(tab)
  LOOP
    EXECUTE format('ALTER POLICY scope_filter ON scirag.%I USING ('
                   '(SELECT scirag.scope_documents()) IS NULL OR document_id = ANY ((SELECT scirag.scope_documents())::bigint[]))',
                   t.tab);
  END LOOP;
END $$;

ALTER POLICY scope_filter ON scirag.kg_communities USING (
  (SELECT scirag.scope_documents()) IS NULL
  OR source_documents <@ ((SELECT scirag.scope_documents())::bigint[]));
COMMIT;
