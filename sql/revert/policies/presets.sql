-- Revert scirag:policies/presets
BEGIN;
REVOKE INSERT, UPDATE, DELETE ON scirag.presets FROM scirag_loader;
REVOKE SELECT ON scirag.presets FROM scirag_reader, scirag_loader;
DROP POLICY loader_all ON scirag.presets;
DROP POLICY read_all ON scirag.presets;
ALTER TABLE scirag.presets NO FORCE ROW LEVEL SECURITY;
ALTER TABLE scirag.presets DISABLE ROW LEVEL SECURITY;
COMMIT;
