-- Deploy scirag:functions/scope_ceiling
-- Split (issue 28): scirag.scope_ceiling, moved out of functions/scope (as sql/functions/scope@v1.3.sql defines
-- it; the rework after @v1.3 now holds scope_is_empty and current_scope only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/scope_ceiling` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_ceiling()
RETURNS TABLE (licenses text[], sources text[])
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  caller name := scirag.scope_role();
BEGIN
  -- PL/pgSQL, not SQL: its plan is cached per session, where a SQL function with a SET
  -- clause is planned on every call (policies call this several times per query).
  -- Union over every role the caller is a member of (it could SET ROLE to any of
  -- them anyway). sources NULL on any ceiling row means "any source".
  RETURN QUERY
  SELECT coalesce(array_agg(DISTINCT l), '{}'),
         CASE WHEN bool_or(c.sources IS NULL) THEN NULL
              ELSE coalesce(array_agg(DISTINCT s) FILTER (WHERE s IS NOT NULL), '{}') END
  FROM scirag.role_ceilings c
  LEFT JOIN LATERAL unnest(c.licenses) AS l ON true
  LEFT JOIN LATERAL unnest(c.sources) AS s ON true
  -- By OID and only while the role still has the name the ceiling was written for:
  -- a dropped role's row is skipped (it used to make pg_has_role raise for every
  -- reader), and a new role that takes an old name inherits nothing.
  -- (to_regrole is a syscache lookup; a join with the pg_roles view cost 0.4 ms per call)
  WHERE to_regrole(quote_ident(c.role_name)) = c.role_oid
    AND pg_has_role(caller, c.role_oid, 'MEMBER');
END $$;
COMMENT ON FUNCTION scirag.scope_ceiling() IS
  'The most the calling role (scope_role()) may see: union of role_ceilings over the roles it is a member of (matched by role OID; rows of dropped or renamed roles apply to nobody). No row means nothing.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.scope_ceiling() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.scope_ceiling() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_ceiling() TO scirag_reader, scirag_loader, scirag_owner;
COMMIT;
