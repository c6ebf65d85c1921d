-- Revert scirag:functions/check_question
BEGIN;
DROP FUNCTION scirag.check_question(text, text);
COMMIT;
