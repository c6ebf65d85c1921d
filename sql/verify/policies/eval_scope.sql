-- Verify scirag:policies/eval_scope
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['eval_runs', 'eval_results', 'eval_questions', 'eval_answers'] LOOP
    ASSERT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = ('scirag.' || t)::regclass AND polname = 'scope_read'),
      format('%s: scope_read policy missing', t);
    ASSERT NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = ('scirag.' || t)::regclass AND polname = 'read_all'),
      format('%s: the unscoped read_all policy is still there', t);
    ASSERT (SELECT relforcerowsecurity FROM pg_class WHERE oid = ('scirag.' || t)::regclass),
      format('%s: row-level security must be forced', t);
  END LOOP;
  ASSERT (SELECT pg_get_expr(polqual, polrelid) FROM pg_policy
          WHERE polrelid = 'scirag.eval_runs'::regclass AND polname = 'scope_read') LIKE '%eval_run_visible%',
    'eval_runs.scope_read must use eval_run_visible';
END $$;
