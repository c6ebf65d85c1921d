-- Verify scirag:functions/scope_narrow
DO $$
BEGIN
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_narrow_documents()'::regprocedure),
         'scirag.scope_narrow_documents(): SECURITY INVOKER (it runs inside the layers, as scirag_api), pinned search_path';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_narrow_documents()', 'EXECUTE'), 'scirag.scope_narrow_documents(): scirag_api lacks EXECUTE';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.scope_narrow_documents()', 'EXECUTE'), 'scirag.scope_narrow_documents(): a reader must not call it';
  ASSERT NOT has_function_privilege('public', 'scirag.scope_narrow_documents()', 'EXECUTE'), 'scirag.scope_narrow_documents(): PUBLIC must not call it';
END $$;
