-- Verify scirag:functions/search_vector_narrow
DO $$
BEGIN
  ASSERT (SELECT prosrc ~ 'scope_narrow_documents\(\)' AND pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef
                 AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.search_vector(public.vector, integer)'::regprocedure),
         'scirag.search_vector(vector, integer): ranks a narrow scope exactly; owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.search_vector(public.vector, integer)', 'EXECUTE'), 'scirag.search_vector: scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.search_vector(public.vector, integer)', 'EXECUTE'), 'scirag.search_vector: scirag_loader lacks EXECUTE';
END $$;
