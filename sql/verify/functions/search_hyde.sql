-- Verify scirag:functions/search_hyde
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_hyde(text, int)') IS NOT NULL, 'search_hyde missing';
  ASSERT EXISTS (SELECT 1 FROM scirag.settings WHERE key = 'hyde_styles'), 'hyde_styles setting missing';
  ASSERT (SELECT 'search_path=pg_catalog, pg_temp' = ANY (proconfig) FROM pg_proc
          WHERE oid = 'scirag.search_hyde(text, int)'::regprocedure), 'search_hyde must pin search_path';
  -- the bounds hold before the question reaches Python
  BEGIN
    PERFORM count(*) FROM scirag.search_hyde(repeat('a', 4001), 10);
    RAISE EXCEPTION 'search_hyde accepted a question of 4001 characters';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
  BEGIN
    PERFORM count(*) FROM scirag.search_hyde('straw', 1001);
    RAISE EXCEPTION 'search_hyde accepted n = 1001';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
