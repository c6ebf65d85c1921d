-- Verify scirag:functions/scope
DO $$
BEGIN
  ASSERT scirag.parse_list(' a, b ,,a') = ARRAY['a', 'b'], 'parse_list';
  ASSERT to_regprocedure('scirag.scope_licenses()') IS NOT NULL, 'scope_licenses missing';
  ASSERT to_regclass('scirag.document_keys') IS NOT NULL, 'document_keys missing';
END $$;
-- functions/scope (issue 13 rework): strict settings, capped lengths
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.scope_setting(text, int)') IS NOT NULL, 'scope_setting missing';
  ASSERT pg_get_functiondef('scirag.scope_ceiling()'::regprocedure) LIKE '%role_oid%', 'scope_ceiling must match by role OID';
  PERFORM set_config('scirag.exclude_retracted', 'y', true);
  BEGIN
    PERFORM scirag.scope_exclude_retracted();
    RAISE EXCEPTION 'exclude_retracted = y was accepted';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
  PERFORM set_config('scirag.exclude_retracted', '', true);
END $$;
-- functions/scope (security wall rework): the ceiling follows the caller inside the API
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.scope_role()') IS NOT NULL, 'scope_role missing';
  ASSERT scirag.scope_role() = current_user, 'outside the API, scope_role must be current_user';
  ASSERT pg_get_functiondef('scirag.scope_ceiling()'::regprocedure) LIKE '%scirag.scope_role()%',
         'scope_ceiling must key the ceiling on scope_role()';
END $$;
