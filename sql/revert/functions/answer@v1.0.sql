-- Revert scirag:functions/answer
BEGIN;
DROP FUNCTION scirag.answer_text(text, jsonb);
DROP FUNCTION scirag.answer(text, jsonb);
COMMIT;
