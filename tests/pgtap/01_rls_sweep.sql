-- Security sweep over the catalog (DESIGN.md sections 5 and 11). Every check reads
-- pg_catalog, so a table, view or function added later without RLS, comment or the
-- right privileges fails here without anyone having to remember to add a test.
BEGIN;
SELECT plan(31);
\ir helpers/fixtures.psql

-- ---------------------------------------------------------------- row-level security
SELECT isnt_empty(
  $$SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p')$$,
  'the sweep sees the scirag tables');

SELECT set_has(
  $$SELECT c.relname::text FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p')
      AND c.relrowsecurity AND c.relforcerowsecurity$$,
  $$VALUES ('documents'), ('chunks'), ('kw_postings'), ('kw_term_stats'), ('kw_class_stats'),
           ('role_ceilings'), ('ingest_runs'), ('ingest_reports'), ('retrieval_profiles')$$,
  'every evidence table is among the RLS-forced tables');

SELECT is_empty(
  $$SELECT c.relname, c.relrowsecurity AS enabled, c.relforcerowsecurity AS forced
    FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'f')
      AND c.relname <> 'settings'
      AND NOT (c.relrowsecurity AND c.relforcerowsecurity)$$,
  'every scirag table except settings has row-level security enabled AND forced');

SELECT is_empty(
  $$SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p')
      AND c.relrowsecurity
      AND NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid)$$,
  'every RLS table has at least one policy (none is silently unreadable)');

-- A view runs with its owner's rights unless security_invoker: it would bypass RLS.
SELECT is_empty(
  $$SELECT c.relname FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('v', 'm')
      AND NOT coalesce('security_invoker=true' = ANY (c.reloptions)
                       OR 'security_invoker=on' = ANY (c.reloptions), false)$$,
  'every scirag view is security_invoker (no view bypasses row-level security)');

-- ---------------------------------------------------------------- ownership
SELECT is_empty(
  $$SELECT c.relname, pg_get_userbyid(c.relowner) AS owner
    FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'f')
      AND r.rolcanlogin$$,
  'no LOGIN role owns a scirag table');

SELECT is_empty(
  $$SELECT c.relname, c.relkind, pg_get_userbyid(c.relowner) AS owner
    FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('v', 'm', 'S')
      AND r.rolcanlogin$$,
  'no LOGIN role owns a scirag view or sequence');

SELECT is_empty(
  $$SELECT c.relname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p')
      AND (r.rolbypassrls OR r.rolsuper)$$,
  'no scirag table is owned by a role that bypasses row-level security');

SELECT is_empty(
  $$SELECT rolname, rolcanlogin, rolbypassrls, rolsuper FROM pg_roles
    WHERE rolname IN ('scirag_owner', 'scirag_loader', 'scirag_reader')
      AND (rolcanlogin OR rolbypassrls OR rolsuper)$$,
  'the scirag group roles are NOLOGIN and do not bypass row-level security');

SELECT ok(
  NOT pg_has_role('scirag_reader', 'scirag_loader', 'MEMBER')
  AND NOT pg_has_role('scirag_reader', 'scirag_owner', 'MEMBER'),
  'scirag_reader is not a member of the loader or owner roles');

-- ---------------------------------------------------------------- functions
SELECT is(
  ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p
        WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef ORDER BY 1),
  ARRAY[]::text[],
  'no scirag function is SECURITY DEFINER: everything runs as the caller, under its RLS');

SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef
      AND NOT (coalesce(obj_description(p.oid, 'pg_proc'), '') ~* 'security definer'
               OR p.prosrc ~* 'security definer')$$,
  'every SECURITY DEFINER function says why in its COMMENT or body');

SELECT is_empty(
  $$SELECT p.oid::regprocedure, p.proconfig FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef
      AND NOT ('search_path=pg_catalog, pg_temp' = ANY (coalesce(p.proconfig, '{}')))$$,
  'every SECURITY DEFINER function pins search_path = pg_catalog, pg_temp');

SELECT is_empty(
  $$SELECT p.oid::regprocedure, pg_get_userbyid(p.proowner) AS owner
    FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef
      AND (r.rolcanlogin OR r.rolsuper)$$,
  'no SECURITY DEFINER function is owned by a LOGIN or superuser role');

SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.prokind IN ('f', 'p')
      AND NOT EXISTS (SELECT 1 FROM unnest(coalesce(p.proconfig, '{}')) AS s
                      WHERE s LIKE 'search\_path=%')$$,
  'every scirag function pins its search_path');

-- ---------------------------------------------------------------- comments
SELECT is_empty(
  $$SELECT c.relname, c.relkind FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
      AND obj_description(c.oid, 'pg_class') IS NULL$$,
  'every scirag table and view has a COMMENT');

SELECT is_empty(
  $$SELECT c.relname, a.attname FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
      AND col_description(c.oid, a.attnum) IS NULL$$,
  'every scirag column has a COMMENT');

SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace
      AND obj_description(p.oid, 'pg_proc') IS NULL$$,
  'every scirag function has a COMMENT');

-- ---------------------------------------------------------------- privileges
SELECT is_empty(
  $$SELECT c.relname, a.privilege_type
    FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) AS a
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
      AND a.grantee = 0$$,
  'PUBLIC has no privilege on any scirag table, view or sequence');

SELECT is_empty(
  $$SELECT c.relname, a.attname FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    CROSS JOIN LATERAL aclexplode(a.attacl) AS x
    WHERE c.relnamespace = 'scirag'::regnamespace AND x.grantee = 0$$,
  'PUBLIC has no column privilege on any scirag table');

SELECT ok(
  NOT has_schema_privilege('public', 'scirag', 'USAGE')
  AND NOT has_schema_privilege('public', 'scirag', 'CREATE'),
  'PUBLIC has neither USAGE nor CREATE on schema scirag');

SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p,
         aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) AS a
    WHERE p.pronamespace = 'scirag'::regnamespace AND a.grantee = 0$$,
  'PUBLIC cannot EXECUTE any scirag function (privileges revoked from PUBLIC by default)');

SELECT is_empty(
  $$SELECT c.relname, x.priv FROM pg_class c
    CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) AS x(priv)
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
      AND (has_table_privilege('scirag_reader', c.oid, x.priv)
           OR (x.priv IN ('INSERT', 'UPDATE', 'REFERENCES')
               AND has_any_column_privilege('scirag_reader', c.oid, x.priv)))$$,
  'scirag_reader holds no write privilege (table or column) on any scirag relation');

-- ---------------------------------------------------------------- as a real reader
-- A throwaway LOGIN member of scirag_reader, as a human or an adapter would connect.
SELECT tests.login_role('reader', 'scirag_reader') AS reader \gset
SELECT tests.as_role(:'reader');

SELECT is(
  ARRAY(SELECT role_name::text FROM scirag.role_ceilings ORDER BY 1),
  ARRAY['scirag_reader'],
  'a reader sees only the ceiling that applies to it');

SELECT throws_ok(
  $$UPDATE scirag.role_ceilings SET licenses = ARRAY['public', 'open_commercial', 'open_noncommercial', 'restricted', 'unknown']
    WHERE role_name = 'scirag_reader'$$,
  '42501', NULL,
  'a reader cannot raise its own ceiling (UPDATE role_ceilings)');

SELECT throws_ok(
  format($$INSERT INTO scirag.role_ceilings (role_name, licenses) VALUES (%L, ARRAY['restricted'])$$, :'reader'),
  '42501', NULL,
  'a reader cannot give itself a ceiling (INSERT role_ceilings)');

SELECT throws_ok(
  $$UPDATE scirag.settings SET value = '/tmp' WHERE key = 'python_path'$$,
  '42501', NULL,
  'a reader cannot change database settings (UPDATE settings)');

SELECT throws_ok(
  $$DELETE FROM scirag.chunks$$,
  '42501', NULL,
  'a reader cannot delete evidence (DELETE chunks)');

SELECT throws_ok(
  $$ALTER TABLE scirag.chunks DISABLE ROW LEVEL SECURITY$$,
  '42501', NULL,
  'a reader cannot switch row-level security off');

SELECT throws_ok(
  format($$GRANT scirag_loader TO %I$$, :'reader'),
  '42501', NULL,
  'a reader cannot grant itself the loader role (whose policy sees every class)');

SELECT throws_ok(
  $$CREATE FUNCTION scirag.scope_licenses_shadow() RETURNS text[] LANGUAGE sql AS 'SELECT NULL::text[]'$$,
  '42501', NULL,
  'a reader cannot create objects in schema scirag');

SELECT tests.as_role(NULL);

SELECT * FROM finish();
ROLLBACK;
