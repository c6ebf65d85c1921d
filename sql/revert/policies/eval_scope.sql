-- Revert scirag:policies/eval_scope: the policies of schema/eval and schema/eval_answers again
BEGIN;
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['eval_runs', 'eval_results', 'eval_questions', 'eval_answers'] LOOP
    EXECUTE format('DROP POLICY scope_read ON scirag.%I', t);
    EXECUTE format('DROP POLICY loader_all ON scirag.%I', t);
    EXECUTE format('CREATE POLICY loader_all ON scirag.%I FOR ALL TO scirag_loader USING (true) WITH CHECK (true)', t);
  END LOOP;
END $$;
CREATE POLICY read_all ON scirag.eval_runs FOR SELECT TO PUBLIC USING (true);
CREATE POLICY read_all ON scirag.eval_results FOR SELECT TO PUBLIC USING (true);
CREATE POLICY scope_read ON scirag.eval_questions FOR SELECT TO PUBLIC
  USING (NOT EXISTS (SELECT 1 FROM unnest(reference_documents) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.external_id = x)));
CREATE POLICY scope_read ON scirag.eval_answers FOR SELECT TO PUBLIC
  USING (NOT EXISTS (SELECT 1 FROM unnest(evidence_documents) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = x)));
COMMIT;
