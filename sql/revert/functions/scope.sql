-- Revert scirag:functions/scope
BEGIN;
DROP FUNCTION scirag.current_scope(), scirag.scope_is_empty(), scirag.scope_exclude_retracted(),
  scirag.scope_excluded_documents(), scirag.scope_sources(), scirag.scope_licenses(),
  scirag.scope_ceiling(), scirag.parse_list(text);
REVOKE ALL ON scirag.documents FROM scirag_scope_resolver;
REVOKE ALL ON SCHEMA scirag FROM scirag_scope_resolver;
DO $$ BEGIN
  DROP ROLE IF EXISTS scirag_scope_resolver;
EXCEPTION WHEN dependent_objects_still_exist THEN
  RAISE NOTICE 'scirag_scope_resolver is still used by another database; kept';
END $$;
COMMIT;
