-- Revert scirag:functions/retrieve_evidence
BEGIN;
DROP FUNCTION scirag.retrieve_evidence(text, int, text, jsonb);
COMMIT;
