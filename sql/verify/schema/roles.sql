-- Verify scirag:schema/roles
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM pg_roles
          WHERE rolname IN ('scirag_owner', 'scirag_loader', 'scirag_reader') AND NOT rolcanlogin) = 3,
         'scirag group roles missing or able to log in';
END $$;
