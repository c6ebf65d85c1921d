-- Revert scirag:policies/rls
BEGIN;
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['documents', 'chunks', 'kw_postings', 'kw_term_stats', 'kw_class_stats', 'document_keys'] LOOP
    EXECUTE format('DROP POLICY scope_read ON scirag.%I', t);
    EXECUTE format('DROP POLICY loader_all ON scirag.%I', t);
    EXECUTE format('ALTER TABLE scirag.%I NO FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE scirag.%I DISABLE ROW LEVEL SECURITY', t);
  END LOOP;
END $$;
DROP POLICY own_ceiling ON scirag.role_ceilings;
ALTER TABLE scirag.role_ceilings NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY;
DROP POLICY loader_all ON scirag.ingest_runs;
ALTER TABLE scirag.ingest_runs NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY;
DROP POLICY loader_all ON scirag.ingest_reports;
ALTER TABLE scirag.ingest_reports NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON ALL TABLES IN SCHEMA scirag FROM scirag_reader, scirag_loader;
DROP FUNCTION scirag.scope_predicate(text, boolean);
COMMIT;
