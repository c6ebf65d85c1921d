-- Deploy scirag:policies/rls
-- Row-level security on every table that carries evidence (DESIGN.md section 5).
-- One scope predicate, written once here and applied to each table by column
-- names; the scope functions run once per query as initplans, not once per row.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_predicate(id_col text, with_document boolean)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 'license::text = ANY ((SELECT scirag.scope_licenses())::text[])'
      || ' AND ((SELECT scirag.scope_sources()) IS NULL OR source = ANY ((SELECT scirag.scope_sources())::text[]))'
      || CASE WHEN with_document THEN
           format(' AND %I <> ALL ((SELECT scirag.scope_excluded_documents())::bigint[])', id_col)
           || ' AND NOT (retracted AND (SELECT scirag.scope_exclude_retracted()))'
         ELSE '' END
$$;
COMMENT ON FUNCTION scirag.scope_predicate(text, boolean) IS
  'The text of the scope policy for an evidence table (used at deploy time to write the policies).';

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('documents', 'id', true),
      ('chunks', 'document_id', true),
      ('kw_postings', 'document_id', true),
      ('kw_term_stats', NULL, false),
      ('kw_class_stats', NULL, false),
      ('document_keys', NULL, false)) AS v(tab, id_col, with_document)
  LOOP
    EXECUTE format('ALTER TABLE scirag.%I ENABLE ROW LEVEL SECURITY', t.tab);
    EXECUTE format('ALTER TABLE scirag.%I FORCE ROW LEVEL SECURITY', t.tab);
    -- Readers see rows inside their scope, and nothing else.
    EXECUTE format('CREATE POLICY scope_read ON scirag.%I FOR SELECT TO PUBLIC USING (%s)',
                   t.tab, scirag.scope_predicate(t.id_col, t.with_document));
    -- The loader writes (and so must see) every class; membership in scirag_loader is an admin decision.
    EXECUTE format('CREATE POLICY loader_all ON scirag.%I FOR ALL TO scirag_loader USING (true) WITH CHECK (true)', t.tab);
  END LOOP;
END $$;

-- Ceilings: a role sees only the ceilings that apply to it.
ALTER TABLE scirag.role_ceilings ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.role_ceilings FORCE ROW LEVEL SECURITY;
CREATE POLICY own_ceiling ON scirag.role_ceilings FOR SELECT TO PUBLIC
  USING (pg_has_role(current_user, role_name, 'MEMBER'));

-- Ingest runs and reports name files and reasons: loader and admin only.
ALTER TABLE scirag.ingest_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.ingest_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY loader_all ON scirag.ingest_runs FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
ALTER TABLE scirag.ingest_reports ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.ingest_reports FORCE ROW LEVEL SECURITY;
CREATE POLICY loader_all ON scirag.ingest_reports FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

-- Privileges: nothing for PUBLIC; readers read, the loader writes.
REVOKE ALL ON ALL TABLES IN SCHEMA scirag FROM PUBLIC;
GRANT SELECT ON scirag.documents, scirag.chunks, scirag.kw_postings, scirag.kw_term_stats,
  scirag.kw_class_stats, scirag.document_keys, scirag.settings, scirag.role_ceilings TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.documents, scirag.chunks, scirag.kw_postings, scirag.kw_term_stats,
  scirag.kw_class_stats, scirag.document_keys, scirag.ingest_runs, scirag.ingest_reports TO scirag_loader;
GRANT SELECT ON scirag.ingest_runs, scirag.ingest_reports TO scirag_loader;
COMMIT;
