-- Verify scirag:functions/scope_documents_scan
DO $$
BEGIN
  ASSERT (SELECT prosecdef AND proowner = 'scirag_api'::regrole
          FROM pg_proc WHERE oid = 'scirag.scope_documents()'::regprocedure),
         'scope_documents(): runs as scirag_api (the reader wall)';
  -- the function that scans (this change's scope_documents, or the resolution a later
  -- change moves out of it) never probes an index
  ASSERT EXISTS (SELECT 1 FROM pg_proc
                 WHERE pronamespace = 'scirag'::regnamespace AND proname IN ('scope_documents', 'scope_documents_resolve')
                   AND pg_get_functiondef(oid) ~ 'scirag\.document_keys'
                   AND proconfig @> ARRAY['enable_indexscan=off', 'enable_indexonlyscan=off', 'enable_bitmapscan=off']),
         'the scan of documents and document_keys for the positive filters must never probe an index';
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_filtered()'::regprocedure),
         'scope_filtered(): SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_filtered()', 'EXECUTE'),
         'scope_filtered(): readers run it through the scope_filter policies';
  ASSERT NOT has_function_privilege('public', 'scirag.scope_filtered()', 'EXECUTE'), 'PUBLIC must not call scope_filtered';
  ASSERT scirag.scope_filtered() = (scirag.scope_documents() IS NOT NULL),
         'scope_filtered() must say exactly when scope_documents() is not NULL';
END $$;
