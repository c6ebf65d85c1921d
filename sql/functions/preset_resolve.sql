-- Deploy scirag:functions/preset_resolve
-- The one place a preset name becomes what each stage takes (issue 28 item 3): the
-- retrieve options (scirag.retrieve_config), the answer options (scirag.answer's
-- max_sources, profile and evidence stages, read by scirag_helpers.answer.indb) and
-- the consolidation settings (scirag.consolidation_config). Before, retrieve_config
-- and consolidation_config read scirag.preset_get themselves and the answerer mapped
-- the preset's keys in Python.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.preset_resolve(name text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  cfg jsonb := scirag.preset_get(name);
  ret jsonb := cfg->'retrieval';
  con jsonb := cfg->'consolidation';
  aug jsonb := cfg->'augmentation';
  tr jsonb := jsonb_build_object('preset', name);
  ans jsonb := '{}';
  kv record;
BEGIN
  -- retrieve: each retrieval key that names a retrieve option in scirag.preset_schema()
  -- (the one place of that mapping, and of its bounds: retrieve_option_schema()) sets
  -- that option; "depths.vector" sets one key of the depths map. Its
  -- reranker_model_path is not used: the model folder is an admin setting.
  FOR kv IN SELECT k.key, string_to_array(k.value->>'option', '.') AS path
            FROM jsonb_each(scirag.preset_schema()->'retrieval') AS k WHERE k.value ? 'option' LOOP
    CONTINUE WHEN coalesce(ret->kv.key, 'null') = 'null';
    IF cardinality(kv.path) = 2 AND NOT tr ? kv.path[1] THEN
      tr := tr || jsonb_build_object(kv.path[1], '{}'::jsonb);
    END IF;
    tr := jsonb_set(tr, kv.path, ret->kv.key);
  END LOOP;
  -- the rerank stage runs only when the preset turns one of its parts on
  IF NOT (tr #>> '{rerank,reranker}' <> 'none' OR coalesce((tr #>> '{rerank,intent_bias}')::boolean, false)
          OR coalesce((tr #>> '{rerank,entity_boost}')::float8, 0) > 0) THEN
    tr := tr - 'rerank';
  END IF;
  -- answer: the number of sources, the retrieval profile and the evidence stages the
  -- preset turns on (a key the call gives itself wins; the answerer merges)
  IF jsonb_typeof(aug->'top_n_contexts') = 'number' THEN
    ans := ans || jsonb_build_object('max_sources', aug->'top_n_contexts');
  END IF;
  IF coalesce((ret->>'enrichment_enabled')::boolean, false) THEN
    ans := ans || jsonb_build_object('enrich', jsonb_build_object(
      'enabled', true,
      'min_word_count', coalesce(ret->'min_word_count', '150'),
      'max_word_count', coalesce(ret->'max_word_count', '1000')));
  END IF;
  IF coalesce((con->>'enabled')::boolean, false) THEN
    ans := ans || jsonb_build_object('consolidate', jsonb_build_object('enabled', true) || (
      SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}') FROM jsonb_each(con) AS e
      WHERE e.key IN ('coverage_threshold', 'line_gap', 'min_content_length', 'enrich_from_parent')));
  END IF;
  IF coalesce((ret->>'min_sentence_filter_enabled')::boolean, false) THEN
    ans := ans || jsonb_build_object('min_sentences', coalesce(ret->'min_sentence_count', '5'));
  END IF;
  IF jsonb_typeof(ret->'profile') = 'string' THEN
    ans := ans || jsonb_build_object('profile', ret->'profile');
  END IF;
  RETURN jsonb_build_object('preset', name, 'retrieve', tr, 'answer', ans, 'consolidation', con);
END $$;
COMMENT ON FUNCTION scirag.preset_resolve(text) IS
  'The one place a preset (scirag.preset_get: stored overrides on the defaults) becomes what each stage takes: "retrieve", the scirag.retrieve options its retrieval keys name in scirag.preset_schema() (with "preset": its name; rerank only when one of its parts is on); "answer", the scirag.answer options it sets (max_sources from augmentation.top_n_contexts, profile, and enrich, consolidate, min_sentences when the preset turns them on); "consolidation", its consolidation section. Used by scirag.retrieve_config, scirag.consolidation_config and scirag.answer; an unknown name raises (SQLSTATE 22023).';

REVOKE ALL ON FUNCTION scirag.preset_resolve(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.preset_resolve(text) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
