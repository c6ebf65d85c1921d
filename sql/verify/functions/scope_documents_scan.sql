-- Verify scirag:functions/scope_documents_scan
DO $$
BEGIN
  ASSERT (SELECT prosecdef AND proowner = 'scirag_api'::regrole
          FROM pg_proc WHERE oid = 'scirag.scope_documents()'::regprocedure),
         'scope_documents(): runs as scirag_api (the reader wall)';
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['enable_indexscan=off', 'enable_indexonlyscan=off', 'enable_bitmapscan=off']
          FROM pg_proc WHERE oid = 'scirag.scope_documents_resolve()'::regprocedure),
         'scope_documents_resolve(): SECURITY INVOKER, scans, never probes an index';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_documents_resolve()', 'EXECUTE'), 'scirag_api lacks EXECUTE on scope_documents_resolve';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.scope_documents_resolve()', 'EXECUTE'), 'a reader must not call scope_documents_resolve';
  ASSERT NOT has_function_privilege('public', 'scirag.scope_documents_resolve()', 'EXECUTE'), 'PUBLIC must not call scope_documents_resolve';
  ASSERT (SELECT NOT prosecdef AND l.lanname = 'plpython3u' FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
          WHERE p.oid = 'scirag.scope_documents_kept()'::regprocedure), 'scope_documents_kept(): SECURITY INVOKER PL/Python';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.scope_documents_kept()', 'EXECUTE'), 'a reader must not call scope_documents_kept';
  ASSERT NOT has_function_privilege('public', 'scirag.scope_documents_kept()', 'EXECUTE'), 'PUBLIC must not call scope_documents_kept';
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_filtered()'::regprocedure),
         'scope_filtered(): SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_filtered()', 'EXECUTE'),
         'scope_filtered(): readers run it through the scope_filter policies';
  ASSERT NOT has_function_privilege('public', 'scirag.scope_filtered()', 'EXECUTE'), 'PUBLIC must not call scope_filtered';
  ASSERT scirag.scope_filtered() = (scirag.scope_documents() IS NOT NULL),
         'scope_filtered() must say exactly when scope_documents() is not NULL';
END $$;
