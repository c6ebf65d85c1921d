-- Deploy scirag:functions/scope
-- The one implementation of the caller's scope (DESIGN.md section 5). Row-level
-- security policies call these once per query (as initplans), so every layer
-- filters before it ranks.
BEGIN;

-- Manifest ids must be resolved to document ids for scirag.exclude_documents, but
-- the documents policy itself calls that resolution (a lookup there would recurse).
-- document_keys is a thin copy of (id, external_id) under a policy that checks
-- license and source only, so the lookup runs as the caller and can never reveal a
-- document the caller could not see anyway.
CREATE TABLE scirag.document_keys (
  id          bigint PRIMARY KEY REFERENCES scirag.documents (id) ON DELETE CASCADE,
  external_id text NOT NULL UNIQUE,
  license     scirag.license_class NOT NULL,
  source      text NOT NULL
);
ALTER TABLE scirag.document_keys OWNER TO scirag_owner;
COMMENT ON TABLE scirag.document_keys IS 'Manifest id to document id, readable within the caller''s license and source scope (resolves scirag.exclude_documents)';
COMMENT ON COLUMN scirag.document_keys.id IS 'document id';
COMMENT ON COLUMN scirag.document_keys.external_id IS 'manifest id';
COMMENT ON COLUMN scirag.document_keys.license IS 'license class of the document (scope)';
COMMENT ON COLUMN scirag.document_keys.source IS 'source of the document (scope)';

CREATE OR REPLACE FUNCTION scirag.sync_document_keys()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO scirag.document_keys (id, external_id, license, source)
  VALUES (NEW.id, NEW.external_id, NEW.license, NEW.source)
  ON CONFLICT (id) DO UPDATE
    SET external_id = excluded.external_id, license = excluded.license, source = excluded.source;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.sync_document_keys() IS 'Row trigger: keeps document_keys in step with documents';
CREATE TRIGGER documents_sync_keys AFTER INSERT OR UPDATE OF external_id, license, source ON scirag.documents
  FOR EACH ROW EXECUTE FUNCTION scirag.sync_document_keys();

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
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Union over every role the caller is a member of (it could SET ROLE to any of
  -- them anyway). sources NULL on any ceiling row means "any source".
  SELECT coalesce(array_agg(DISTINCT l), '{}'),
         CASE WHEN bool_or(c.sources IS NULL) THEN NULL
              ELSE coalesce(array_agg(DISTINCT s) FILTER (WHERE s IS NOT NULL), '{}') END
  FROM scirag.role_ceilings c
  LEFT JOIN LATERAL unnest(c.licenses) AS l ON true
  LEFT JOIN LATERAL unnest(c.sources) AS s ON true
  WHERE pg_has_role(current_user, c.role_name, 'MEMBER')
$$;
COMMENT ON FUNCTION scirag.scope_ceiling() IS
  'The most the current role may see: union of role_ceilings over the roles it is a member of. No row means nothing.';

CREATE OR REPLACE FUNCTION scirag.scope_licenses()
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  raw text := current_setting('scirag.licenses', true);
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
  raw text := current_setting('scirag.sources', true);
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
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(array_agg(DISTINCT k.id), '{}')
  FROM unnest(scirag.parse_list(current_setting('scirag.exclude_documents', true))) AS x
  JOIN scirag.document_keys k
    ON k.external_id = x OR k.id = CASE WHEN x ~ '^[0-9]{1,18}$' THEN x::bigint END
$$;
COMMENT ON FUNCTION scirag.scope_excluded_documents() IS
  'Document ids excluded by scirag.exclude_documents (manifest ids or numeric ids, comma-separated).';

CREATE OR REPLACE FUNCTION scirag.scope_exclude_retracted()
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(lower(btrim(current_setting('scirag.exclude_retracted', true))) IN ('on', 'true', '1', 'yes'), false)
$$;
COMMENT ON FUNCTION scirag.scope_exclude_retracted() IS
  'True when scirag.exclude_retracted is on: retracted documents drop out of every layer.';

CREATE OR REPLACE FUNCTION scirag.scope_is_empty()
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT cardinality(scirag.scope_licenses()) = 0
      OR cardinality(coalesce(scirag.scope_sources(), '{x}')) = 0
$$;
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
    'exclude_retracted', scirag.scope_exclude_retracted())
$$;
COMMENT ON FUNCTION scirag.current_scope() IS 'The effective scope of this session, for humans and traces (ids are counted, not listed).';

GRANT EXECUTE ON FUNCTION scirag.parse_list(text), scirag.scope_ceiling(), scirag.scope_licenses(),
  scirag.scope_sources(), scirag.scope_excluded_documents(), scirag.scope_exclude_retracted(),
  scirag.scope_is_empty(), scirag.current_scope()
  TO scirag_reader, scirag_loader, scirag_owner;
COMMIT;
