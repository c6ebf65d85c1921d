-- Verify scirag:functions/mmr
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.mmr_select(bigint[], double precision[], int, double precision)') IS NOT NULL,
         'mmr_select missing';
  ASSERT (SELECT count(*) FROM scirag.mmr_select('{}', '{}', 5)) = 0, 'mmr_select of nothing returns rows';
END $$;
