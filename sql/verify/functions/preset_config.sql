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
  -- a key that stands for a retrieve option has that option's bounds, and no others
  ASSERT scirag.preset_schema() #> '{retrieval,dense_limit,max}'
         = scirag.retrieve_option_schema() #> '{depths,of,max}', 'dense_limit does not take the bounds of depths.vector';
  ASSERT NOT EXISTS (SELECT 1 FROM jsonb_each(scirag.preset_schema()) s, jsonb_each(s.value) k
                     WHERE k.value ? 'option'
                       AND k.value - 'option' - 'default' <> scirag.preset_option_spec(k.value->>'option')),
         'a preset key that names a retrieve option has bounds of its own';
END $$;
