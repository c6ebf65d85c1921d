-- Deploy scirag:functions/scope
-- The one implementation of the caller's scope (DESIGN.md section 5). Row-level
-- security policies call these once per query (as initplans), so every layer
-- filters before it ranks.
BEGIN;

-- Reworked (issue 13): scirag.document_keys and its trigger stay as functions/scope@v1.0
-- created them; this version replaces the functions only. Narrowing settings are
-- strict (a value that is not understood raises, naming the setting, instead of
-- silently meaning "off"), their length is capped, ceilings match by role OID, and
-- current_scope() reports excluded ids that resolved to nothing.

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

CREATE OR REPLACE FUNCTION scirag.scope_ceiling()
RETURNS TABLE (licenses text[], sources text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
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
    AND pg_has_role(current_user, c.role_oid, 'MEMBER');
END $$;
COMMENT ON FUNCTION scirag.scope_ceiling() IS
  'The most the current role may see: union of role_ceilings over the roles it is a member of (matched by role OID; rows of dropped or renamed roles apply to nobody). No row means nothing.';

CREATE OR REPLACE FUNCTION scirag.scope_licenses()
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  raw text := scirag.scope_setting('scirag.licenses', 1024);
  requested text[];
  bad text;
BEGIN
  IF raw IS NULL OR lower(btrim(raw)) = 'default' THEN
    requested := ARRAY['public', 'open_commercial'];  -- external-safe; unknown never is
  ELSE
    requested := scirag.parse_list(lower(raw));        -- '' is an explicit empty list: nothing
  END IF;
  SELECT x INTO bad FROM unnest(requested) AS x
  WHERE x NOT IN ('public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown') LIMIT 1;
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.licenses: unknown license class "%"', bad
      USING HINT = 'use a comma-separated subset of public, open_commercial, open_noncommercial, restricted, unknown; '''' for none; default for public,open_commercial';
  END IF;
  -- Every policy evaluates the license list, but the other settings only when a row
  -- reaches them (exclude_retracted only for a retracted row): check them all here, so a
  -- bad value fails every query instead of failing open until such a row turns up.
  PERFORM scirag.scope_exclude_retracted(), scirag.scope_setting('scirag.exclude_documents', 65536),
          scirag.scope_setting('scirag.sources', 65536);
  RETURN ARRAY(SELECT unnest(requested) INTERSECT SELECT unnest(c.licenses)
               FROM scirag.scope_ceiling() c ORDER BY 1);
END $$;
COMMENT ON FUNCTION scirag.scope_licenses() IS
  'Effective license classes: scirag.licenses (unset or "default" = public,open_commercial; "" = none) intersected with the role ceiling.';

CREATE OR REPLACE FUNCTION scirag.scope_sources()
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  raw text := scirag.scope_setting('scirag.sources', 65536);
  ceiling text[] := (SELECT c.sources FROM scirag.scope_ceiling() c);
BEGIN
  IF raw IS NULL OR btrim(raw) = '' OR lower(btrim(raw)) = 'default' THEN
    RETURN ceiling;                                   -- no narrowing asked for
  END IF;
  IF ceiling IS NULL THEN
    RETURN scirag.parse_list(raw);
  END IF;
  RETURN ARRAY(SELECT unnest(scirag.parse_list(raw)) INTERSECT SELECT unnest(ceiling) ORDER BY 1);
END $$;
COMMENT ON FUNCTION scirag.scope_sources() IS
  'Effective sources: scirag.sources (unset or "" = any) intersected with the role ceiling; NULL means any source.';

CREATE OR REPLACE FUNCTION scirag.scope_excluded_documents()
RETURNS bigint[]
LANGUAGE plpgsql STABLE
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

CREATE OR REPLACE FUNCTION scirag.scope_is_empty()
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN cardinality(scirag.scope_licenses()) = 0
      OR cardinality(coalesce(scirag.scope_sources(), '{x}')) = 0;
END $$;
COMMENT ON FUNCTION scirag.scope_is_empty() IS
  'True when the scope admits nothing, so callers can return before any embedding or model call (fail closed).';

CREATE OR REPLACE FUNCTION scirag.current_scope()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_build_object(
    'role', current_user,
    'licenses', to_jsonb(scirag.scope_licenses()),
    'sources', to_jsonb(scirag.scope_sources()),
    'excluded_documents', cardinality(scirag.scope_excluded_documents()),
    -- ids that resolved to nothing (unknown, or outside the scope anyway: the two are
    -- indistinguishable on purpose) are ignored; say how many, so a typo is noticed
    'excluded_documents_unresolved', (
      SELECT count(*) FROM unnest(scirag.parse_list(scirag.scope_setting('scirag.exclude_documents', 65536))) AS x
      WHERE NOT EXISTS (SELECT 1 FROM scirag.document_keys k
                        WHERE k.external_id = x OR k.id = CASE WHEN x ~ '^[0-9]{1,18}$' THEN x::bigint END)),
    'exclude_retracted', scirag.scope_exclude_retracted())
$$;
COMMENT ON FUNCTION scirag.current_scope() IS 'The effective scope of this session, for humans and traces (ids are counted, not listed; excluded_documents_unresolved counts listed ids that match no document the caller could see).';

REVOKE ALL ON FUNCTION scirag.scope_setting(text, int), scirag.raise_setting_error(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.parse_list(text), scirag.scope_ceiling(), scirag.scope_setting(text, int),
  scirag.raise_setting_error(text, text, text), scirag.scope_licenses(),
  scirag.scope_sources(), scirag.scope_excluded_documents(), scirag.scope_exclude_retracted(),
  scirag.scope_is_empty(), scirag.current_scope()
  TO scirag_reader, scirag_loader, scirag_owner;
COMMIT;
