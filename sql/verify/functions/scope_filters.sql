-- Verify scirag:functions/scope_filters
DO $$
BEGIN
  ASSERT scirag.scope_years('2019, 2015-2016, -1990') @> ARRAY[int4range(2019, 2019, '[]'), int4range(2015, 2016, '[]'), int4range(NULL, 1990, '[]')]
     AND cardinality(scirag.scope_years('2019, 2015-2016, -1990')) = 3, 'scope_years';
  ASSERT scirag.parse_name_list(' Vaswani, A.; ;vaswani, a.') = ARRAY['vaswani, a.'], 'parse_name_list';
  BEGIN
    PERFORM scirag.scope_years('20x9');
    RAISE EXCEPTION 'scope_years accepted 20x9';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
  ASSERT NOT has_function_privilege('public', 'scirag.scope_documents()', 'EXECUTE'), 'PUBLIC must not call scope_documents';
  ASSERT (SELECT prosecdef AND proowner = 'scirag_api'::regrole FROM pg_proc WHERE oid = 'scirag.scope_documents()'::regprocedure),
         'scope_documents must run as scirag_api (the reader wall)';
  ASSERT scirag.scope_documents() IS NULL OR current_setting('scirag.documents', true) <> '', 'no filter must mean NULL';
END $$;
