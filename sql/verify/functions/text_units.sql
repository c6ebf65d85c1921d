-- Verify scirag:functions/text_units
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.text_units(text, text[])'::regprocedure),
         'scirag.text_units(text, text[]): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.text_units(text, text[])', 'EXECUTE'), 'scirag.text_units(text, text[]): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.text_units(text, text[])', 'EXECUTE'), 'scirag.text_units(text, text[]): scirag_loader lacks EXECUTE';
END $$;
