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
-- functions/retrieve (issue 16 rework): retrieve in parts; the deadline skips optional layers
DO $$
DECLARE r record;
BEGIN
  ASSERT to_regprocedure('scirag.retrieve_layers(text, jsonb, public.vector, timestamptz)') IS NOT NULL, 'retrieve_layers missing';
  ASSERT to_regprocedure('scirag.retrieve_fuse(scirag.layer_hit[], jsonb)') IS NOT NULL, 'retrieve_fuse missing';
  ASSERT to_regprocedure('scirag.retrieve_rows(scirag.ranked_hit[], int)') IS NOT NULL, 'retrieve_rows missing';
  SELECT * INTO r FROM scirag.retrieve_layers('straw yield',
    scirag.retrieve_config('deep', 3, '{"layers": ["keyword", "graph"], "deadline_ms": 0}'));
  ASSERT (SELECT s->>'status' FROM jsonb_array_elements(r.stages) s WHERE s->>'stage' = 'graph') = 'skipped',
         'a passed deadline did not skip the optional graph layer';
  ASSERT (SELECT s->>'status' FROM jsonb_array_elements(r.stages) s WHERE s->>'stage' = 'keyword') IN ('ok', 'empty'),
         'the required keyword layer did not run';
END $$;
