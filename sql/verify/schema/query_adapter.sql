-- Verify scirag:schema/query_adapter on pg
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM scirag.settings WHERE key = 'query_adapter' AND value IN ('scoped', 'always', 'none')),
    'a query_adapter setting (scoped, always or none) exists';
END $$;
