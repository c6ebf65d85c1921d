-- Verify scirag:functions/check_question
DO $$
BEGIN
  PERFORM scirag.check_question(repeat('x', 4000), 'verify');
  BEGIN
    PERFORM scirag.check_question(repeat('x', 4001), 'verify');
    RAISE EXCEPTION 'a 4001-character question was accepted';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
