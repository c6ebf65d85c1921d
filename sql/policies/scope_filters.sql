-- Deploy scirag:policies/scope_filters
-- The positive filters (functions/scope_filters) as RESTRICTIVE policies: PostgreSQL
-- ANDs them with the permissive scope_read policies, so they narrow every evidence
-- table before any layer orders or limits candidates, and restate none of the other
-- rules. BM25 statistics (kw_term_stats, kw_class_stats) stay those of the caller's
-- licence and source classes: a filter changes which chunks compete, not how a term
-- is weighted. documents itself is not narrowed: scope_documents() reads it.
BEGIN;

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('chunks'), ('kw_postings'), ('kg_mentions'), ('kg_relationships'),
      ('document_citations'), ('kg_community_chunks')) AS v(tab)
  LOOP
    EXECUTE format('CREATE POLICY scope_filter ON scirag.%I AS RESTRICTIVE FOR SELECT TO PUBLIC USING ('
                   '(SELECT scirag.scope_documents()) IS NULL OR document_id = ANY ((SELECT scirag.scope_documents())::bigint[]))',
                   t.tab);
    EXECUTE format('COMMENT ON POLICY scope_filter ON scirag.%I IS %L', t.tab,
                   'Positive scope filters (scirag.documents, years, authors, journals, dois): only rows of the admitted documents.');
  END LOOP;
END $$;

-- A community summary speaks for all its source documents: shown only when every one is admitted.
CREATE POLICY scope_filter ON scirag.kg_communities AS RESTRICTIVE FOR SELECT TO PUBLIC USING (
  (SELECT scirag.scope_documents()) IS NULL
  OR source_documents <@ ((SELECT scirag.scope_documents())::bigint[]));
COMMENT ON POLICY scope_filter ON scirag.kg_communities IS
  'Positive scope filters: a community only when every source document is admitted.';
COMMIT;
