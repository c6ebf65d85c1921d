-- Verify scirag:functions/intent
DO $$
BEGIN
  ASSERT scirag.classify_intent('Compare CBT and DBT approaches') = 'COMPARISON', 'classify_intent broken';
  ASSERT scirag.classify_intent('What is cognitive behavioral therapy?') = 'DEFINITION', 'classify_intent broken';
END $$;
