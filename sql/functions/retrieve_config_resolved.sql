-- Deploy scirag:functions/retrieve_config_resolved
-- The preset resolved once per answer (issue 28): scirag.retrieve_config with a fourth
-- argument, a preset as scirag.preset_resolve gave it, so that a caller which resolved
-- the preset already (scirag.answer, for its own options) does not have it resolved a
-- second time. The three-argument API function is now this one with no preset given;
-- what it returns is unchanged. Its revert re-creates the version of
-- functions/retrieve_config_preset and drops the four-argument one.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_config(profile text, k int, options jsonb, preset jsonb)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  sch jsonb := scirag.retrieve_option_schema();
  opts jsonb := coalesce(options, '{}');
  cfg jsonb;
  kv record;
  name text;
BEGIN
  IF jsonb_typeof(opts) <> 'object' THEN
    RAISE EXCEPTION 'scirag.retrieve: options must be a JSON object (got %)', jsonb_typeof(opts) USING ERRCODE = '22023';
  END IF;
  SELECT p.config INTO cfg FROM scirag.retrieval_profiles p WHERE p.name = profile;
  IF cfg IS NULL THEN
    RAISE EXCEPTION 'scirag.retrieve: unknown profile "%"', left(profile, 100)
      USING ERRCODE = '22023', HINT = 'SELECT name FROM scirag.retrieval_profiles';
  END IF;
  FOR kv IN SELECT * FROM jsonb_each(opts) LOOP
    IF NOT sch ? kv.key OR kv.key = 'k' THEN   -- k is retrieve's argument, not an option
      RAISE EXCEPTION 'scirag.retrieve: unknown option "%"', left(kv.key, 100) USING ERRCODE = '22023',
        HINT = 'options are ' || (SELECT string_agg(x, ', ' ORDER BY x) FROM jsonb_object_keys(sch) AS x
                                   WHERE x <> 'k');
    END IF;
  END LOOP;
  IF opts ? 'preset' AND jsonb_typeof(opts->'preset') <> 'string' THEN
    RAISE EXCEPTION 'scirag.retrieve: option "preset" must be a string (got %)', jsonb_typeof(opts->'preset')
      USING ERRCODE = '22023';
  END IF;
  -- The maps merge key by key, so they must be objects before the merge.
  FOREACH name IN ARRAY ARRAY['weights', 'budgets_ms', 'depths', 'rerank'] LOOP
    IF opts ? name AND jsonb_typeof(opts->name) <> 'object' THEN
      RAISE EXCEPTION 'scirag.retrieve: option "%" must be a JSON object (got %)', name, jsonb_typeof(opts->name)
        USING ERRCODE = '22023';
    END IF;
  END LOOP;
  IF opts->'rerank' ? 'model_path' THEN
    RAISE EXCEPTION 'scirag.retrieve: option "rerank.model_path" is not accepted from callers'
      USING ERRCODE = '22023', HINT = 'the admin sets the model folder in scirag.settings (reranker_model_path)';
  END IF;
  -- per-call options override the profile; weights and budgets merge key by key
  cfg := cfg || (opts - 'weights' - 'budgets_ms')
             || jsonb_build_object('weights', coalesce(cfg->'weights', '{}') || coalesce(opts->'weights', '{}'),
                                   'budgets_ms', coalesce(cfg->'budgets_ms', '{}') || coalesce(opts->'budgets_ms', '{}'),
                                   'k', k, 'profile', profile);
  -- A preset (VulcanLab-style, scirag.presets) sets the candidate depths, RRF k, the
  -- pool the later stages choose from, the number of results and those stages: the
  -- options scirag.preset_resolve (the one place a preset is resolved) gives retrieve.
  -- The caller may hand in what it resolved already (scirag.answer resolves the preset
  -- for its own options first): used only when it is the resolution of the preset the
  -- options name; anything else is resolved here, as before.
  IF opts ? 'preset' THEN
    IF preset IS NULL OR preset->>'preset' IS DISTINCT FROM opts->>'preset'
       OR jsonb_typeof(preset->'retrieve') IS DISTINCT FROM 'object' THEN
      preset := scirag.preset_resolve(opts->>'preset');
    END IF;
    -- explicit options still win (the maps were merged key by key above); a model
    -- folder never comes from a caller, not even inside a resolved preset
    cfg := cfg || ((preset->'retrieve') #- '{rerank,model_path}') || (opts - 'preset' - 'weights' - 'budgets_ms');
  END IF;
  IF cfg->'k' = 'null' OR NOT cfg ? 'k' THEN
    RAISE EXCEPTION 'scirag.retrieve: k must not be null' USING ERRCODE = '22023';
  END IF;
  RETURN scirag.retrieve_config_check(cfg);
END $$;
COMMENT ON FUNCTION scirag.retrieve_config(text, int, jsonb, jsonb) IS
  'scirag.retrieve_config(profile, k, options) with the preset already resolved: preset is a scirag.preset_resolve result (or NULL). It is used when its "preset" is the name options.preset gives (its retrieve options, never a rerank.model_path); otherwise the preset is resolved here. The configuration is the one the three-argument function gives. Internal: scirag.retrieve(query, k, profile, options, query_embedding, preset) calls it; readers call the three-argument function.';

CREATE OR REPLACE FUNCTION scirag.retrieve_config(profile text, k int DEFAULT 10, options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT scirag.retrieve_config(profile, k, options, NULL::jsonb)
$$;
COMMENT ON FUNCTION scirag.retrieve_config(text, int, jsonb) IS
  'The one place where a retrieval profile, a preset (options.preset) and per-call options become one configuration: profile, then preset (the retrieve options scirag.preset_resolve gives: each retrieval key sets the option it names in scirag.preset_schema()), then explicit options; weights and budgets_ms merge key by key; k is the result count (a preset''s top_n_final replaces it); "profile" names the row. Checked by scirag.retrieve_config_check (every option within the bounds of retrieve_option_schema(), every required key there, SQLSTATE 22023). A caller''s rerank.model_path is refused (the model folder is an admin setting).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read. The four-argument
-- function is not for readers (they cannot hand in a resolved preset).
ALTER FUNCTION scirag.retrieve_config(text, int, jsonb, jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve_config(text, int, jsonb, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_config(text, int, jsonb, jsonb) TO scirag_loader;
ALTER FUNCTION scirag.retrieve_config(text, int, jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve_config(text, int, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_config(text, int, jsonb) TO scirag_reader, scirag_loader;
COMMIT;
