-- Revert scirag:functions/scope_filters
BEGIN;
DROP FUNCTION scirag.scope_documents();
DROP FUNCTION scirag.scope_years(text);
DROP FUNCTION scirag.parse_name_list(text);
COMMIT;
