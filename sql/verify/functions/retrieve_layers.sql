-- Verify scirag:functions/retrieve_layers
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz)'::regprocedure),
         'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz)', 'EXECUTE'), 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz)', 'EXECUTE'), 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz)', 'EXECUTE'), 'scirag.retrieve_layers(text, jsonb, public.vector, timestamptz): scirag_loader lacks EXECUTE';
END $$;
