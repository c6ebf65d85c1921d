-- Deploy scirag:policies/answer
-- Row-level security and grants of the answer configuration tables (prompt_templates,
-- answer_intents), from now on here (issue 16: a policy lives in sql/policies).
-- schema/answer (released, frozen) created the same ones; this change drops them by
-- name and creates them again, so it is the same on a fresh deploy and on an upgrade,
-- and a later change to them is a rework of this one.
-- Templates and intents are configuration, not evidence: every scirag role reads them;
-- the loader (which installs domain prompts) writes them; readers cannot change what
-- answers say.
BEGIN;
ALTER TABLE scirag.prompt_templates ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.prompt_templates FORCE ROW LEVEL SECURITY;
ALTER TABLE scirag.answer_intents ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.answer_intents FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS read_all ON scirag.prompt_templates;
DROP POLICY IF EXISTS loader_all ON scirag.prompt_templates;
DROP POLICY IF EXISTS read_all ON scirag.answer_intents;
DROP POLICY IF EXISTS loader_all ON scirag.answer_intents;
CREATE POLICY read_all ON scirag.prompt_templates FOR SELECT TO scirag_reader, scirag_loader USING (true);
CREATE POLICY loader_all ON scirag.prompt_templates FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY read_all ON scirag.answer_intents FOR SELECT TO scirag_reader, scirag_loader USING (true);
CREATE POLICY loader_all ON scirag.answer_intents FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
REVOKE ALL ON scirag.prompt_templates, scirag.answer_intents FROM PUBLIC;
GRANT SELECT ON scirag.prompt_templates, scirag.answer_intents TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.prompt_templates, scirag.answer_intents TO scirag_loader;
COMMIT;
