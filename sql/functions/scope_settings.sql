-- Deploy scirag:functions/scope_settings
-- Split (issue 28): scirag.scope_role, scirag.scope_setting, scirag.parse_list, scirag.raise_setting_error, moved out of functions/scope (as sql/functions/scope@v1.3.sql defines
-- it; the rework after @v1.3 now holds scope_is_empty and current_scope only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/scope_settings` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.scope_role()
RETURNS name
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Inside the API (current_user = scirag_api) the caller is the role the session
  -- switched to with SET [LOCAL] ROLE (a pooler or PostgREST does so per request), or
  -- else the session user. Neither can be forged: SET ROLE and set_config('role', ...)
  -- check that the session user is a member of the role, and a SECURITY DEFINER
  -- function cannot change role at all. Everywhere else it is current_user, as before.
  RETURN CASE WHEN current_user <> 'scirag_api' THEN current_user
              WHEN current_setting('role') = 'none' THEN session_user
              ELSE current_setting('role')::name END;
END $$;
COMMENT ON FUNCTION scirag.scope_role() IS
  'The role whose ceiling applies: current_user, except inside the reader API functions (current_user scirag_api), where it is the caller (SET ROLE role, else the session user).';

CREATE OR REPLACE FUNCTION scirag.scope_setting(name text, max_length int DEFAULT 65536)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  raw text := current_setting(name, true);
BEGIN
  -- A reader can SET anything; a megabyte list would be re-parsed by every policy initplan.
  IF length(raw) > max_length THEN
    RAISE EXCEPTION '%: value is % characters long, at most % allowed', name, length(raw), max_length
      USING ERRCODE = '22023';
  END IF;
  RETURN raw;
END $$;
COMMENT ON FUNCTION scirag.scope_setting(text, int) IS
  'A scope session setting (NULL when unset), refused with an error naming it when longer than max_length characters.';

CREATE OR REPLACE FUNCTION scirag.parse_list(value text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(array_agg(DISTINCT btrim(x)) FILTER (WHERE btrim(x) <> ''), '{}')
  FROM unnest(string_to_array(value, ',')) AS x
$$;
COMMENT ON FUNCTION scirag.parse_list(text) IS
  'Splits a comma-separated setting into a trimmed, de-duplicated array ('''' gives an empty array).';

CREATE OR REPLACE FUNCTION scirag.raise_setting_error(name text, value text, expected text)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RAISE EXCEPTION '%: invalid value "%"', name, left(value, 64)
    USING ERRCODE = '22023', HINT = 'use ' || expected;
END $$;
COMMENT ON FUNCTION scirag.raise_setting_error(text, text, text) IS
  'Raises "<setting>: invalid value" with the accepted values as hint (usable inside SQL expressions).';

REVOKE ALL ON FUNCTION scirag.scope_role(), scirag.scope_setting(text, int), scirag.parse_list(text), scirag.raise_setting_error(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_role(), scirag.scope_setting(text, int), scirag.parse_list(text), scirag.raise_setting_error(text, text, text) TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
COMMIT;
