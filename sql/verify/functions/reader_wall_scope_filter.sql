-- Verify scirag:functions/reader_wall_scope_filter
DO $$
BEGIN
  ASSERT 'scope_filter_settings' = ANY (scirag.reader_wall_functions()), 'scope_filter_settings must be a listed reader API function';
  ASSERT (SELECT prosecdef AND proowner = 'scirag_api'::regrole AND 'search_path=pg_catalog, pg_temp' = ANY (proconfig)
          FROM pg_proc WHERE oid = 'scirag.scope_filter_settings()'::regprocedure),
         'scope_filter_settings(): SECURITY DEFINER, owned by scirag_api, search_path pinned';
END $$;
