-- Deploy scirag:functions/scope (rework for issue 23: the positive filters in scope_is_empty and current_scope)
-- The one implementation of the caller's scope (docs/threat-model.md). Row-level
-- security policies call its functions once per query (as initplans), so every layer
-- filters before it ranks.
-- Since the split (issue 28, docs/releasing.md "One object per change") this rework
-- holds only the two functions it changes, scope_is_empty and current_scope (the
-- scope's summary: is it empty, what is it). The other functions of
-- functions/scope@v1.3 are unchanged by it and live in changes of their own:
-- scope_settings (scope_role, scope_setting, parse_list, raise_setting_error),
-- scope_ceiling, scope_classes (scope_licenses, scope_sources) and scope_exclusions
-- (scope_excluded_documents, scope_exclude_retracted). Its revert still restores the
-- whole @v1.3 script. current_scope() runs as scirag_api (SECURITY DEFINER, owner
-- scirag_api, declared below as the reader wall leaves it): readers reach evidence
-- only through such API functions, where the scope is keyed on scope_role(), the caller.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_is_empty()
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- The positive filters (functions/scope_filters) are parsed here too, so a bad value
  -- stops the call with its 22023 before any layer runs (a policy raising inside one
  -- layer would only show as an empty result), and a filter that admits no document
  -- ends the call before any embedding or model work.
  RETURN cardinality(scirag.scope_licenses()) = 0
      OR cardinality(coalesce(scirag.scope_sources(), '{x}')) = 0
      OR cardinality(coalesce(scirag.scope_documents(), '{0}')) = 0;
END $$;
COMMENT ON FUNCTION scirag.scope_is_empty() IS
  'True when the scope admits nothing (no licence, no source, or positive filters that admit no visible document), so callers can return before any embedding or model call (fail closed); raises 22023 on a bad filter value.';

CREATE OR REPLACE FUNCTION scirag.current_scope()
RETURNS jsonb
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_build_object(
    'role', scirag.scope_role(),
    'licenses', to_jsonb(scirag.scope_licenses()),
    'sources', to_jsonb(scirag.scope_sources()),
    'excluded_documents', cardinality(scirag.scope_excluded_documents()),
    -- ids that resolved to nothing (unknown, or outside the scope anyway: the two are
    -- indistinguishable on purpose) are ignored; say how many, so a typo is noticed
    'excluded_documents_unresolved', (
      SELECT count(*) FROM unnest(scirag.parse_list(scirag.scope_setting('scirag.exclude_documents', 65536))) AS x
      WHERE NOT EXISTS (SELECT 1 FROM scirag.document_keys k
                        WHERE k.external_id = x OR k.id = CASE WHEN x ~ '^[0-9]{1,18}$' THEN x::bigint END)),
    'exclude_retracted', scirag.scope_exclude_retracted(),
    -- positive filters: which are set, and how many visible documents they admit
    'filters', (SELECT coalesce(jsonb_object_agg(f, current_setting('scirag.' || f, true)), '{}')
                FROM unnest(ARRAY['documents', 'years', 'authors', 'journals', 'dois']) AS f
                WHERE coalesce(btrim(current_setting('scirag.' || f, true)), '') <> ''),
    'filtered_documents', cardinality(scirag.scope_documents()))
$$;
COMMENT ON FUNCTION scirag.current_scope() IS 'The effective scope of this session, for humans and traces (ids are counted, not listed; excluded_documents_unresolved counts listed ids that match no document the caller could see; filters lists the positive filters set, filtered_documents how many visible documents they admit, NULL without filters).';

ALTER FUNCTION scirag.current_scope() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.scope_is_empty(), scirag.current_scope() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_is_empty(), scirag.current_scope()
  TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
-- The safety net: the same settings for every listed API function (tests/pgtap/01_rls_sweep.sql).
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
