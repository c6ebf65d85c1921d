-- Deploy scirag:policies/presets
-- Presets hold no evidence: every scirag role may read them; only the loader
-- (and the admin) may write them.
BEGIN;
ALTER TABLE scirag.presets ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.presets FORCE ROW LEVEL SECURITY;
CREATE POLICY read_all ON scirag.presets FOR SELECT TO scirag_reader, scirag_loader USING (true);
CREATE POLICY loader_all ON scirag.presets FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
REVOKE ALL ON scirag.presets FROM PUBLIC;
GRANT SELECT ON scirag.presets TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.presets TO scirag_loader;
COMMIT;
