-- Revert scirag:functions/scope_narrow
BEGIN;
DROP FUNCTION IF EXISTS scirag.scope_narrow_documents();
COMMIT;
