-- Verify scirag:schema/eval_answers
DO $$
BEGIN
  ASSERT to_regclass('scirag.eval_questions') IS NOT NULL, 'eval_questions missing';
  ASSERT to_regclass('scirag.eval_answers') IS NOT NULL, 'eval_answers missing';
  ASSERT to_regclass('scirag.eval_config_metrics') IS NOT NULL, 'eval_config_metrics view missing';
  ASSERT to_regclass('scirag.eval_answer_metrics') IS NOT NULL, 'eval_answer_metrics view missing';
  ASSERT (SELECT bool_and(relrowsecurity AND relforcerowsecurity) FROM pg_class
          WHERE oid IN ('scirag.eval_questions'::regclass, 'scirag.eval_answers'::regclass)),
         'eval_questions / eval_answers: row-level security not enabled and forced';
  ASSERT scirag.corpus_fingerprint_full() ? 'kg_entities', 'corpus_fingerprint_full lacks graph counts';
END $$;
