-- Verify scirag:schema/pdf_fidelity
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'scirag.chunks'::regclass
                 AND attname = 'is_reference' AND NOT attisdropped),
         'chunks.is_reference missing';
  ASSERT pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conrelid = 'scirag.eval_runs'::regclass
                                AND conname = 'eval_runs_kind_check')) LIKE '%''pdf''%',
         'eval_runs kind pdf not allowed';
END $$;
