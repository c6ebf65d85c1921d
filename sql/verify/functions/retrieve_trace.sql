-- Verify scirag:functions/retrieve_trace
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.last_trace()'::regprocedure),
         'scirag.last_trace(): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.last_trace()', 'EXECUTE'), 'scirag.last_trace(): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.last_trace()', 'EXECUTE'), 'scirag.last_trace(): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.last_trace()', 'EXECUTE'), 'scirag.last_trace(): scirag_loader lacks EXECUTE';
  ASSERT (SELECT pg_get_userbyid(proowner) = 'postgres' AND prosecdef = false AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.trace_error(text, text, text, text, double precision)'::regprocedure),
         'scirag.trace_error(text, text, text, text, double precision): owner postgres, SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_reader', 'scirag.trace_error(text, text, text, text, double precision)', 'EXECUTE'), 'scirag.trace_error(text, text, text, text, double precision): scirag_reader lacks EXECUTE';
  ASSERT has_function_privilege('scirag_api', 'scirag.trace_error(text, text, text, text, double precision)', 'EXECUTE'), 'scirag.trace_error(text, text, text, text, double precision): scirag_api lacks EXECUTE';
  ASSERT has_function_privilege('scirag_loader', 'scirag.trace_error(text, text, text, text, double precision)', 'EXECUTE'), 'scirag.trace_error(text, text, text, text, double precision): scirag_loader lacks EXECUTE';
END $$;
