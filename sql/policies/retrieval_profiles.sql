-- Deploy scirag:policies/retrieval_profiles
-- retrieval_profiles' row-level security and grants, from now on here (issue 16: a
-- policy lives in sql/policies). schema/retrieval_config (released, frozen) created the
-- same ones; this change drops them by name and creates them again, so it is the same
-- on a fresh deploy and on an upgrade, and a later change to them is a rework of this one.
-- Profiles hold no evidence: every role reads them; only the owner writes them.
BEGIN;
ALTER TABLE scirag.retrieval_profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.retrieval_profiles FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS read_all ON scirag.retrieval_profiles;
CREATE POLICY read_all ON scirag.retrieval_profiles FOR SELECT TO PUBLIC USING (true);
GRANT SELECT ON scirag.retrieval_profiles TO scirag_reader, scirag_loader;
COMMIT;
