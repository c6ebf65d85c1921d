-- Verify scirag:functions/scope_settings
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_role()'::regprocedure),
         'scirag.scope_role(): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_role()', 'EXECUTE'), 'scirag.scope_role(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_role()', 'EXECUTE'), 'scirag.scope_role(): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_role()', 'EXECUTE'), 'scirag.scope_role(): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_role()', 'EXECUTE'), 'scirag.scope_role(): scirag_owner lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.scope_setting(text, int)'::regprocedure),
         'scirag.scope_setting(text, int): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.scope_setting(text, int)', 'EXECUTE'), 'scirag.scope_setting(text, int): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.scope_setting(text, int)', 'EXECUTE'), 'scirag.scope_setting(text, int): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.scope_setting(text, int)', 'EXECUTE'), 'scirag.scope_setting(text, int): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.scope_setting(text, int)', 'EXECUTE'), 'scirag.scope_setting(text, int): scirag_owner lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.parse_list(text)'::regprocedure),
         'scirag.parse_list(text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.parse_list(text)', 'EXECUTE'), 'scirag.parse_list(text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.parse_list(text)', 'EXECUTE'), 'scirag.parse_list(text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.parse_list(text)', 'EXECUTE'), 'scirag.parse_list(text): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.parse_list(text)', 'EXECUTE'), 'scirag.parse_list(text): scirag_owner lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.raise_setting_error(text, text, text)'::regprocedure),
         'scirag.raise_setting_error(text, text, text): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.raise_setting_error(text, text, text)', 'EXECUTE'), 'scirag.raise_setting_error(text, text, text): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.raise_setting_error(text, text, text)', 'EXECUTE'), 'scirag.raise_setting_error(text, text, text): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.raise_setting_error(text, text, text)', 'EXECUTE'), 'scirag.raise_setting_error(text, text, text): scirag_loader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_owner', 'scirag.raise_setting_error(text, text, text)', 'EXECUTE'), 'scirag.raise_setting_error(text, text, text): scirag_owner lacks EXECUTE';
END $$;
