-- Verify scirag:schema/eval_screening
DO $$
BEGIN
  ASSERT pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conrelid = 'scirag.eval_runs'::regclass
                                AND conname = 'eval_runs_kind_check')) LIKE '%''screening''%',
         'eval_runs kind screening not allowed';
END $$;
