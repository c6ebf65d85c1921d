-- Verify scirag:functions/mmr
DO $$
DECLARE msg text;
BEGIN
  ASSERT to_regprocedure('scirag.mmr_select(bigint[], double precision[], int, double precision)') IS NOT NULL,
         'mmr_select missing';
  ASSERT (SELECT count(*) FROM scirag.mmr_select('{}', '{}', 5)) = 0, 'mmr_select of nothing returns rows';
  -- the default lambda is the preset default, not a number of its own
  ASSERT (SELECT pg_get_expr(p.proargdefaults, 0) FROM pg_proc p
          WHERE p.oid = 'scirag.mmr_select(bigint[], double precision[], int, double precision)'::regprocedure)
         LIKE '%preset_defaults()%', 'mmr_select''s default mmr_lambda is not the preset default';
  BEGIN
    PERFORM scirag.mmr_select('{}', '{}', 5, 1.5);
  EXCEPTION WHEN invalid_parameter_value THEN msg := SQLERRM;
  END;
  ASSERT msg = 'scirag.mmr_select: mmr_lambda must be between 0 and 1 (got 1.5)', 'mmr_select accepts mmr_lambda 1.5';
END $$;
