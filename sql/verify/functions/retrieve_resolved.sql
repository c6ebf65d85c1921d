-- Verify scirag:functions/retrieve_resolved
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb)'::regprocedure),
         'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
                 AND prosrc ~ 'check_question'
          FROM pg_proc WHERE oid = 'scirag.retrieve(text, int, text, jsonb, public.vector)'::regprocedure),
         'scirag.retrieve(text, int, text, jsonb, public.vector): owner scirag_api, SECURITY DEFINER, pinned search_path, checks the question';
  ASSERT has_function_privilege('scirag_reader', 'scirag.retrieve(text, int, text, jsonb, public.vector)', 'EXECUTE'),
         'scirag.retrieve(text, int, text, jsonb, public.vector): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.retrieve(text, int, text, jsonb, public.vector)', 'EXECUTE'),
         'scirag.retrieve(text, int, text, jsonb, public.vector): scirag_loader lacks EXECUTE';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb)', 'EXECUTE'),
         'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb): readers may hand in a resolved preset';
END $$;
