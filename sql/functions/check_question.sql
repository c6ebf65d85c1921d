-- Deploy scirag:functions/check_question
-- The one question-length bound (issue 13, issue 16): every entry point that takes a
-- question from a caller (retrieve, answer, the layers callable on their own) checks
-- it here, so the limit and the error read the same everywhere.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.check_question(question text, caller text DEFAULT 'scirag')
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Bounded before anything else runs: questions reach Python text routines and
  -- tokenizers whose cost grows with the text. NULL passes: what a missing question
  -- means is the caller's decision.
  IF length(question) > 4000 THEN
    RAISE EXCEPTION '%: the question is % characters long, at most 4000 allowed', caller, length(question)
      USING ERRCODE = '22023';
  END IF;
END $$;
COMMENT ON FUNCTION scirag.check_question(text, text) IS
  'Raises SQLSTATE 22023 ("<caller>: the question is N characters long, at most 4000 allowed") when question is longer than 4000 characters; NULL and shorter questions pass. The one question-length bound of every entry point.';
REVOKE ALL ON FUNCTION scirag.check_question(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.check_question(text, text) TO scirag_reader, scirag_loader;
COMMIT;
