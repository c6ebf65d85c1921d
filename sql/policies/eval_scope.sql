-- Deploy scirag:policies/eval_scope
-- Every evaluation table's row-level security, in one place (issue 16: policies in
-- sql/policies; they used to live in schema/eval and schema/eval_answers).
-- Readers keep SELECT on these tables and views (BI tools chart them), so these
-- policies are the wall here (issue 13 item 7): a run's fingerprint and rows describe
-- the scope it ran under, and a reader sees them only within its own scope.
--   eval_runs      the run's scope (scope_licenses, scope_sources) lies within the caller's;
--   eval_results   its run is visible, and for runs over seed questions (retrieval,
--                  answer) the question is one eval_questions shows the caller;
--   eval_questions every reference document is visible (an expected answer can quote it);
--   eval_answers   its run and question are visible and every document behind the answer is.
-- Document visibility goes through scirag.documents_all_visible /
-- external_ids_all_visible (functions/reader_api): readers hold no SELECT on documents.
-- The loader writes and reads everything.
BEGIN;

DROP POLICY read_all ON scirag.eval_runs;
DROP POLICY loader_all ON scirag.eval_runs;
DROP POLICY read_all ON scirag.eval_results;
DROP POLICY loader_all ON scirag.eval_results;
DROP POLICY scope_read ON scirag.eval_questions;
DROP POLICY loader_all ON scirag.eval_questions;
DROP POLICY scope_read ON scirag.eval_answers;
DROP POLICY loader_all ON scirag.eval_answers;

CREATE POLICY scope_read ON scirag.eval_runs FOR SELECT TO PUBLIC
  USING (scirag.eval_run_visible(scope_licenses, scope_sources));
CREATE POLICY scope_read ON scirag.eval_questions FOR SELECT TO PUBLIC
  USING (scirag.external_ids_all_visible(reference_documents));
-- (the subqueries read eval_runs and eval_questions under their own policies above)
CREATE POLICY scope_read ON scirag.eval_results FOR SELECT TO PUBLIC
  USING (EXISTS (SELECT 1 FROM scirag.eval_runs r
                 WHERE r.id = eval_results.run_id
                   AND (r.kind NOT IN ('retrieval', 'answer')
                        OR EXISTS (SELECT 1 FROM scirag.eval_questions q
                                   WHERE q.dataset = r.dataset AND q.question_id = eval_results.question_id))));
CREATE POLICY scope_read ON scirag.eval_answers FOR SELECT TO PUBLIC
  USING (scirag.documents_all_visible(evidence_documents)
         AND EXISTS (SELECT 1 FROM scirag.eval_runs r
                     JOIN scirag.eval_questions q ON q.dataset = r.dataset AND q.question_id = eval_answers.question_id
                     WHERE r.id = eval_answers.run_id));

CREATE POLICY loader_all ON scirag.eval_runs FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY loader_all ON scirag.eval_results FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY loader_all ON scirag.eval_questions FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY loader_all ON scirag.eval_answers FOR ALL TO scirag_loader USING (true) WITH CHECK (true);

COMMENT ON POLICY scope_read ON scirag.eval_runs IS
  'A run (and its fingerprint) only when the scope it ran under lies within the caller''s scope.';
COMMENT ON POLICY scope_read ON scirag.eval_questions IS
  'A seed question only when every reference document is visible to the caller.';
COMMENT ON POLICY scope_read ON scirag.eval_results IS
  'A per-question result only when its run is visible and (seed-question runs) its question is.';
COMMENT ON POLICY scope_read ON scirag.eval_answers IS
  'An evaluated answer only when its run and question are visible and every document behind it is.';

-- Privileges (unchanged, stated here with the policies they go with).
GRANT SELECT ON scirag.eval_runs, scirag.eval_results, scirag.eval_questions, scirag.eval_answers,
  scirag.eval_metrics, scirag.eval_config_metrics, scirag.eval_answer_metrics TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.eval_runs, scirag.eval_results, scirag.eval_questions, scirag.eval_answers
  TO scirag_loader;
COMMIT;
