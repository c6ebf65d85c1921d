-- Verify scirag:functions/presets
DO $$
BEGIN
  ASSERT scirag.preset_get('default') #>> '{consolidation,coverage_threshold}' = '0.5', 'preset_get(default) broken';
  ASSERT to_regprocedure('scirag.preset_set(text, jsonb, text)') IS NOT NULL, 'preset_set missing';
  ASSERT to_regprocedure('scirag.preset_delete(text)') IS NOT NULL, 'preset_delete missing';
  ASSERT to_regprocedure('scirag.preset_list()') IS NOT NULL, 'preset_list missing';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.preset_set(text, jsonb, text)', 'EXECUTE'),
         'readers may call preset_set';
END $$;
