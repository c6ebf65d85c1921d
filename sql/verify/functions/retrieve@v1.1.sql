-- Verify scirag:functions/retrieve
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.retrieve(text, int, text, jsonb, public.vector)') IS NOT NULL, 'retrieve missing';
  -- keyword-only retrieval needs no model and must answer on any database
  PERFORM * FROM scirag.retrieve('straw yield', 3, 'interactive', '{"layers": ["keyword"]}');
  ASSERT scirag.last_trace() ? 'stages', 'retrieve left no trace';
END $$;
-- functions/retrieve (issue 13 rework): options are validated by retrieve_config
DO $$
BEGIN
  ASSERT (scirag.retrieve_config('interactive', 5, '{"depth": 20}')->>'depth') = '20', 'retrieve_config';
  BEGIN
    PERFORM scirag.retrieve_config('interactive', 5, '{"rrf_k": -1}');
    RAISE EXCEPTION 'rrf_k = -1 was accepted';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
