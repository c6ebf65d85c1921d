-- Deploy scirag:functions/consolidation_config
-- Split (issue 28): scirag.consolidation_config, moved out of functions/consolidate (as sql/functions/consolidate@v1.3.sql defines
-- it; the rework after @v1.3 now holds consolidation_groups only) into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/consolidation_config` (docs/releasing.md, "One object per change").
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
    base := scirag.preset_get(options->>'preset')->'consolidation';
  END IF;
  RETURN scirag.preset_validate(jsonb_build_object('consolidation', base || (options - 'preset')))->'consolidation';
END $$;
COMMENT ON FUNCTION scirag.consolidation_config(jsonb) IS
  'The consolidation settings for a call: defaults, then the preset named by options.preset, then the other options keys (coverage_threshold, line_gap, min_content_length, enrich_from_parent), validated like a preset.';

REVOKE ALL ON FUNCTION scirag.consolidation_config(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.consolidation_config(jsonb) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
