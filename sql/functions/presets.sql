-- Deploy scirag:functions/presets
-- Managing presets (VulcanLab's list / get / create / update / delete) in SQL.
-- Everything runs as the caller: readers can read, and writing takes the
-- loader's table privileges, so preset_set / preset_delete are granted to it alone.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.preset_get(name text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  stored jsonb;
BEGIN
  SELECT p.config INTO stored FROM scirag.presets p WHERE p.name = preset_get.name;
  IF NOT FOUND THEN
    IF preset_get.name = 'default' THEN
      RETURN scirag.preset_defaults();      -- the built-in defaults need no row
    END IF;
    RAISE EXCEPTION 'scirag preset: unknown preset "%"', preset_get.name
      USING ERRCODE = '22023', HINT = 'SELECT name FROM scirag.preset_list()';
  END IF;
  RETURN scirag.preset_validate(stored);
END $$;
COMMENT ON FUNCTION scirag.preset_get(text) IS
  'The complete configuration of a named preset: its stored overrides on top of scirag.preset_defaults(). "default" falls back to the built-in defaults when its row is gone; any other unknown name raises.';

CREATE OR REPLACE FUNCTION scirag.preset_set(name text, config jsonb, description text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM scirag.preset_validate(config);   -- the error names the offending key
  INSERT INTO scirag.presets AS p (name, config, description, updated_at)
  VALUES (preset_set.name, coalesce(preset_set.config, '{}'), preset_set.description, now())
  ON CONFLICT ON CONSTRAINT presets_pkey DO UPDATE
    SET config = excluded.config,
        description = coalesce(excluded.description, p.description),
        updated_at = now();
  RETURN scirag.preset_get(preset_set.name);
END $$;
COMMENT ON FUNCTION scirag.preset_set(text, jsonb, text) IS
  'Creates or replaces a preset (loader / admin only): config holds the overrides (validated; unknown keys and wrong types raise naming the key); a NULL description keeps the old one. Returns the complete configuration.';

CREATE OR REPLACE FUNCTION scirag.preset_delete(name text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
  WITH d AS (DELETE FROM scirag.presets p WHERE p.name = preset_delete.name RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM d)
$$;
COMMENT ON FUNCTION scirag.preset_delete(text) IS
  'Deletes a preset (loader / admin only); true when a row was deleted. Deleting "default" makes preset_get(''default'') return the built-in defaults.';

CREATE OR REPLACE FUNCTION scirag.preset_list()
RETURNS TABLE (name text, description text, updated_at timestamptz, overrides jsonb)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT p.name, p.description, p.updated_at, p.config FROM scirag.presets p ORDER BY p.name
$$;
COMMENT ON FUNCTION scirag.preset_list() IS
  'Every preset with its description, last change and stored overrides (scirag.preset_get gives the complete configuration).';

REVOKE ALL ON FUNCTION scirag.preset_get(text), scirag.preset_set(text, jsonb, text), scirag.preset_delete(text),
  scirag.preset_list() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.preset_get(text), scirag.preset_list() TO scirag_reader, scirag_loader;
GRANT EXECUTE ON FUNCTION scirag.preset_set(text, jsonb, text), scirag.preset_delete(text) TO scirag_loader;
COMMIT;
