-- Verify scirag:policies/scope_filters
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM pg_policies
          WHERE schemaname = 'scirag' AND policyname = 'scope_filter' AND permissive = 'RESTRICTIVE') = 7,
         'seven restrictive scope_filter policies expected';
END $$;
