-- Verify scirag:policies/scope_filters_once
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM pg_policies
          WHERE schemaname = 'scirag' AND policyname = 'scope_filter' AND permissive = 'RESTRICTIVE'
            AND qual LIKE '%scope_filtered()%'
            AND length(qual) - length(replace(qual, 'scope_documents()', '')) = length('scope_documents()')) = 7,
         'seven restrictive scope_filter policies, each asking scope_filtered() and naming scope_documents() once';
END $$;
