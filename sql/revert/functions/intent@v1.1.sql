-- Revert scirag:functions/intent
BEGIN;
DROP FUNCTION scirag.classify_intent(text);
COMMIT;
