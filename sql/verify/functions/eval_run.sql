-- Verify scirag:functions/eval_run
DO $$
BEGIN
  ASSERT (SELECT scirag.eval_scope() ? 'fingerprint'), 'eval_scope() must return the fingerprint';
  ASSERT has_function_privilege('scirag_reader', 'scirag.eval_run_visible(text[], text[])', 'EXECUTE'),
    'readers must be able to evaluate eval_run_visible (the eval policies call it)';
  ASSERT NOT scirag.eval_run_visible(ARRAY['public', 'nonexistent'], NULL), 'a scope outside the caller''s must not be visible';
END $$;
