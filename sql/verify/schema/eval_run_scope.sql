-- Verify scirag:schema/eval_run_scope
DO $$
BEGIN
  ASSERT (SELECT attnotnull FROM pg_attribute
          WHERE attrelid = 'scirag.eval_runs'::regclass AND attname = 'scope_licenses'), 'eval_runs.scope_licenses missing';
  ASSERT EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = 'scirag.eval_runs'::regclass AND attname = 'scope_sources'), 'eval_runs.scope_sources missing';
END $$;
