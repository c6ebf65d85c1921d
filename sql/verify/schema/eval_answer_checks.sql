-- Verify scirag:schema/eval_answer_checks
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM information_schema.columns
          WHERE table_schema = 'scirag' AND table_name = 'eval_answers'
            AND column_name IN ('answer_correct', 'cited_holds_answer', 'supports_ok', 'unsupported')) = 4,
         'eval_answers lacks answer_correct / cited_holds_answer / supports_ok / unsupported';
  ASSERT (SELECT count(*) FROM information_schema.columns
          WHERE table_schema = 'scirag' AND table_name = 'eval_answer_metrics'
            AND column_name IN ('answer_correct_rate', 'cited_holds_answer_rate', 'supports_ok_rate')) = 3,
         'eval_answer_metrics lacks the answer_correct / cited_holds_answer / supports_ok rates';
END $$;
