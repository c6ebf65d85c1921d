-- Deploy scirag:policies/scope_filters_once
-- Each scope_filter policy named scope_documents() twice ("IS NULL OR ... = ANY"), and
-- each mention is an initplan of its own, so a narrow scope resolved the filters twice
-- per table per statement. The policies now ask scope_filtered() (five settings read,
-- no table) whether a filter is set and resolve the admitted documents once. The same
-- rows pass: scope_filtered() is true exactly when scope_documents() is not NULL, and a
-- bad filter value raises the same error from scope_documents().
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
                   'NOT (SELECT scirag.scope_filtered()) OR document_id = ANY ((SELECT scirag.scope_documents())::bigint[]))',
                   t.tab);
  END LOOP;
END $$;

ALTER POLICY scope_filter ON scirag.kg_communities USING (
  NOT (SELECT scirag.scope_filtered())
  OR source_documents <@ ((SELECT scirag.scope_documents())::bigint[]));
COMMIT;
