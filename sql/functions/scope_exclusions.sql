-- Deploy scirag:functions/scope_exclusions
-- Split (issue 28): scirag.scope_excluded_documents, scirag.scope_exclude_retracted, moved out of functions/scope (as sql/functions/scope@v1.3.sql defines
-- it; the rework after @v1.3 now holds scope_is_empty and current_scope only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/scope_exclusions` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_excluded_documents()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- (PL/pgSQL for its cached plans, as the other scope functions)
  RETURN (SELECT coalesce(array_agg(DISTINCT k.id), '{}')
          FROM unnest(scirag.parse_list(scirag.scope_setting('scirag.exclude_documents', 65536))) AS x
          JOIN scirag.document_keys k
            ON k.external_id = x OR k.id = CASE WHEN x ~ '^[0-9]{1,18}$' THEN x::bigint END);
END $$;
COMMENT ON FUNCTION scirag.scope_excluded_documents() IS
  'Document ids excluded by scirag.exclude_documents (manifest ids or numeric ids, comma-separated).';

CREATE OR REPLACE FUNCTION scirag.scope_exclude_retracted()
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Strict: 't', 'y' or a typo used to mean "off" without a word (fail open).
  RETURN CASE lower(btrim(coalesce(scirag.scope_setting('scirag.exclude_retracted', 64), '')))
           WHEN '' THEN false WHEN 'off' THEN false WHEN 'false' THEN false
           WHEN 'on' THEN true WHEN 'true' THEN true
           ELSE scirag.raise_setting_error('scirag.exclude_retracted',
                  current_setting('scirag.exclude_retracted', true), 'on, off, true or false') END;
END $$;
COMMENT ON FUNCTION scirag.scope_exclude_retracted() IS
  'True when scirag.exclude_retracted is on/true (unset, "", off, false: false; anything else raises): retracted documents drop out of every layer.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.scope_excluded_documents() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.scope_excluded_documents(), scirag.scope_exclude_retracted() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_excluded_documents() TO scirag_reader, scirag_loader, scirag_owner;
GRANT EXECUTE ON FUNCTION scirag.scope_exclude_retracted() TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
COMMIT;
