-- Verify scirag:policies/reader_wall
-- Fails `sqitch verify` when a later change (a rework: CREATE OR REPLACE resets SECURITY
-- DEFINER) or a new grant broke the wall.
DO $$
DECLARE
  bad text;
BEGIN
  SELECT string_agg(n, ', ') INTO bad FROM unnest(scirag.reader_wall_functions()) AS n
  WHERE NOT EXISTS (SELECT 1 FROM pg_proc p WHERE p.pronamespace = 'scirag'::regnamespace AND p.proname = n);
  ASSERT bad IS NULL, format('reader API function(s) missing: %s', bad);
  SELECT string_agg(p.oid::regprocedure::text, ', ') INTO bad FROM pg_proc p
  WHERE p.pronamespace = 'scirag'::regnamespace AND p.proname = ANY (scirag.reader_wall_functions())
    AND NOT (p.prosecdef AND p.proowner = 'scirag_api'::regrole
             AND 'search_path=pg_catalog, pg_temp' = ANY (p.proconfig));
  ASSERT bad IS NULL, format('reader API function(s) not SECURITY DEFINER owned by scirag_api with a pinned search_path (a rework resets it: keep policies/reader_wall last): %s', bad);
  -- no other definer in the schema: a definer owned by anyone else escapes the wall's rules
  SELECT string_agg(p.oid::regprocedure::text, ', ') INTO bad FROM pg_proc p
  WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef AND p.proowner <> 'scirag_api'::regrole;
  ASSERT bad IS NULL, format('SECURITY DEFINER function(s) not owned by scirag_api: %s', bad);
  SELECT string_agg(c.relname, ', ') INTO bad FROM pg_class c
  WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S')
    AND NOT scirag.reader_open_table(c.relname)
    AND (has_table_privilege('scirag_reader', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
         OR has_any_column_privilege('scirag_reader', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'));
  ASSERT bad IS NULL, format('readers hold privileges on evidence: %s', bad);
  ASSERT NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = 'scirag'::regnamespace
                     AND c.relowner = 'scirag_api'::regrole), 'scirag_api must own no table (policies would not bind it)';
  ASSERT NOT EXISTS (SELECT 1 FROM pg_auth_members WHERE roleid = 'scirag_api'::regrole),
         'nobody may be a member of scirag_api';
END $$;
DO $$
BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'scirag' AND 'scirag_reader' = ANY (roles)
                     AND NOT ('scirag_api' = ANY (roles))),
         'a policy written for scirag_reader does not bind scirag_api, which reads for readers';
END $$;
