-- Verify scirag:functions/section_chain
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef = true AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.section_chain(bigint, int)'::regprocedure),
         'scirag.section_chain(bigint, int): owner scirag_api, SECURITY DEFINER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.section_chain(bigint, int)', 'EXECUTE'), 'scirag.section_chain(bigint, int): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.section_chain(bigint, int)', 'EXECUTE'), 'scirag.section_chain(bigint, int): scirag_loader lacks EXECUTE';
END $$;
