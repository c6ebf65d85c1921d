-- Verify scirag:functions/retrieve_option_schema_narrow
DO $$
BEGIN
  ASSERT scirag.retrieve_option_schema() #>> '{rerank,fields,narrow_only,type}' = 'boolean',
         'scirag.retrieve_option_schema(): rerank.narrow_only is a boolean';
  ASSERT scirag.retrieve_option_schema() #>> '{rerank,fields,paragraphs,max}' = '8',
         'scirag.retrieve_option_schema(): rerank.paragraphs is an integer up to 8';
END $$;
