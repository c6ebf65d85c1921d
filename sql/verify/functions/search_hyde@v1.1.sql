-- Verify scirag:functions/search_hyde
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.search_hyde(text, int)') IS NOT NULL, 'search_hyde missing';
  ASSERT EXISTS (SELECT 1 FROM scirag.settings WHERE key = 'hyde_styles'), 'hyde_styles setting missing';
END $$;
