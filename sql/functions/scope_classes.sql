-- Deploy scirag:functions/scope_classes
-- Split (issue 28): scirag.scope_licenses, scirag.scope_sources, moved out of functions/scope (as sql/functions/scope@v1.3.sql defines
-- it; the rework after @v1.3 now holds scope_is_empty and current_scope only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/scope_classes` (docs/releasing.md, "One object per change").
BEGIN;

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

REVOKE ALL ON FUNCTION scirag.scope_licenses(), scirag.scope_sources() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.scope_licenses(), scirag.scope_sources() TO scirag_reader, scirag_api, scirag_loader, scirag_owner;
COMMIT;
