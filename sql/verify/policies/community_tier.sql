-- Verify scirag:policies/community_tier
DO $$
BEGIN
  ASSERT (SELECT pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p
          WHERE p.polrelid = 'scirag.kg_communities'::regclass AND p.polname = 'scope_read') LIKE '%tier_licenses%',
         'kg_communities.scope_read must require the caller to see every license class of the tier';
END $$;
