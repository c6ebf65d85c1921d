-- Verify scirag:functions/intent
-- (Not called here: PL/Python needs scirag.settings.python_path, which `scirag db init`
-- writes after the deploy; tests/pgtap/deep_rerank.sql and tests/py/test_intent.py call it.)
DO $$
BEGIN
  ASSERT (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
           WHERE p.oid = 'scirag.classify_intent(text)'::regprocedure) = 'plpython3u',
         'classify_intent is not the PL/Python wrapper of scirag_helpers.prompts';
  ASSERT (SELECT count(*) FROM scirag.answer_intents WHERE cues = '{}') = 1,
         'answer_intents needs exactly one fallback intent (no cues)';
END $$;
