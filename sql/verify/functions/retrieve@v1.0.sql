-- Verify scirag:functions/retrieve
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.retrieve(text, int, text, jsonb, public.vector)') IS NOT NULL, 'retrieve missing';
  -- keyword-only retrieval needs no model and must answer on any database
  PERFORM * FROM scirag.retrieve('straw yield', 3, 'interactive', '{"layers": ["keyword"]}');
  ASSERT scirag.last_trace() ? 'stages', 'retrieve left no trace';
END $$;
