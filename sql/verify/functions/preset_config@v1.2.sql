-- Verify scirag:functions/preset_config
DO $$
DECLARE ok boolean := false;
BEGIN
  ASSERT scirag.preset_defaults() #>> '{retrieval,mmr_lambda}' = '0.7', 'preset defaults missing';
  ASSERT scirag.preset_validate('{"consolidation": {"line_gap": 3}}') #>> '{consolidation,line_gap}' = '3',
         'preset_validate does not merge';
  BEGIN
    PERFORM scirag.preset_validate('{"retrieval": {"no_such_key": 1}}');
  EXCEPTION WHEN invalid_parameter_value THEN ok := SQLERRM LIKE '%retrieval.no_such_key%';
  END;
  ASSERT ok, 'preset_validate accepts an unknown key';
END $$;
