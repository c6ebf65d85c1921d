-- Deploy scirag:functions/consolidation_config_preset
-- scirag.consolidation_config takes a preset's consolidation settings from
-- scirag.preset_resolve (issue 28 item 3: the preset is resolved in one SQL function).
-- A change of its own after the split: its revert re-creates the split version
-- (functions/consolidation_config).
BEGIN;

CREATE OR REPLACE FUNCTION scirag.consolidation_config(options jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  base jsonb := '{}';
BEGIN
  IF options IS NULL THEN
    options := '{}';
  END IF;
  IF jsonb_typeof(options) <> 'object' THEN
    RAISE EXCEPTION 'scirag.consolidate: options must be a JSON object' USING ERRCODE = '22023';
  END IF;
  IF options ? 'preset' THEN
    base := scirag.preset_resolve(options->>'preset')->'consolidation';
  END IF;
  RETURN scirag.preset_validate(jsonb_build_object('consolidation', base || (options - 'preset')))->'consolidation';
END $$;
COMMENT ON FUNCTION scirag.consolidation_config(jsonb) IS
  'The consolidation settings for a call: defaults, then the preset named by options.preset, then the other options keys (coverage_threshold, line_gap, min_content_length, enrich_from_parent), validated like a preset.';

REVOKE ALL ON FUNCTION scirag.consolidation_config(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.consolidation_config(jsonb) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
