-- Revert scirag:functions/retrieve_evidence_resolved: the four-argument
-- scirag.retrieve_evidence of functions/retrieve_evidence again.
BEGIN;
DROP FUNCTION scirag.retrieve_evidence(text, int, text, jsonb, jsonb);
COMMIT;
\ir ../../functions/retrieve_evidence.sql
