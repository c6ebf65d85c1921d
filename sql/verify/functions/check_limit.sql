-- Verify scirag:functions/check_limit
DO $$
BEGIN
  PERFORM scirag.check_limit(1000, 'n', 'scirag.verify');
  PERFORM scirag.check_limit(NULL, 'n', 'scirag.verify');
  PERFORM scirag.check_limit(-5, 'n', 'scirag.verify');
  BEGIN
    PERFORM scirag.check_limit(1001, 'n', 'scirag.verify');
    RAISE EXCEPTION 'check_limit accepted 1001';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
