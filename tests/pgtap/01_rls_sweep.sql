-- Security sweep over the catalog (docs/threat-model.md, docs/releasing.md). Every check reads
-- pg_catalog, so a table, view or function added later without RLS, comment or the
-- right privileges fails here without anyone having to remember to add a test.
BEGIN;
SELECT plan(43);
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
-- The only SECURITY DEFINER functions are the reader API (policies/reader_wall lists
-- them and says why): owned by scirag_api, which owns no table and is a member of
-- nothing, so row-level security binds it.
SELECT is_empty(
  $$SELECT p.oid::regprocedure, pg_get_userbyid(p.proowner) AS owner FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.prosecdef
      AND NOT (p.proowner = 'scirag_api'::regrole AND p.proname = ANY (scirag.reader_wall_functions()))$$,
  'every SECURITY DEFINER function is a listed reader API function owned by scirag_api');

SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.proname = ANY (scirag.reader_wall_functions())
      AND NOT (p.prosecdef AND p.proowner = 'scirag_api'::regrole)$$,
  'every listed reader API function is SECURITY DEFINER owned by scirag_api (a rework resets it)');

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

-- ---------------------------------------------------------------- the wall (issue 13 item 1)
-- A relation a reader can SELECT can be EXPLAINed: index conditions run before the RLS
-- filter and count hidden rows. So evidence is closed to readers entirely. The list of
-- relations is the catalog's, so a table added later is closed unless declared open.
SELECT is_empty(
  $$SELECT c.relname, c.relkind FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
      AND NOT scirag.reader_open_table(c.relname)
      AND (has_table_privilege('scirag_reader', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
           OR has_any_column_privilege('scirag_reader', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))$$,
  'scirag_reader holds no privilege (table or column) on any evidence table, view or sequence');

-- Open means configuration or evaluation: no relation that carries a license class (the
-- mark of evidence), and neither settings (model folder, python path) nor the ceilings.
SELECT is_empty(
  $$SELECT DISTINCT c.relname FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
    WHERE c.relnamespace = 'scirag'::regnamespace AND scirag.reader_open_table(c.relname)
      AND (c.relname IN ('settings', 'role_ceilings') OR a.atttypid = 'scirag.license_class'::regtype)$$,
  'no evidence relation (one with a license class column), nor settings or role_ceilings, is open to readers');

-- A function a reader can run that reads a closed relation (by name in its body) or
-- runs Python (which reads settings and evidence through plpy) must be on the wall.
SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
    WHERE p.pronamespace = 'scirag'::regnamespace
      AND has_function_privilege('scirag_reader', p.oid, 'EXECUTE')
      AND (l.lanname NOT IN ('sql', 'plpgsql')
           OR EXISTS (SELECT 1 FROM pg_class c
                      WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')
                        AND NOT scirag.reader_open_table(c.relname)
                        AND p.prosrc ~ ('scirag\.' || c.relname || '\M')))
      AND NOT (p.prosecdef AND p.proowner = 'scirag_api'::regrole
               AND 'search_path=pg_catalog, pg_temp' = ANY (p.proconfig))$$,
  'every reader-executable function that reads evidence is SECURITY DEFINER, owned by scirag_api, search_path pinned');

SELECT is_empty(
  $$SELECT rolname FROM pg_roles WHERE rolname = 'scirag_api'
      AND (rolcanlogin OR rolsuper OR rolbypassrls
           OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = oid OR m.member = oid)
           OR EXISTS (SELECT 1 FROM pg_class c WHERE c.relowner = oid))$$,
  'scirag_api cannot log in, bypasses nothing, has no members or memberships and owns no relation');

SELECT is_empty(
  $$SELECT tablename, policyname, roles FROM pg_policies
    WHERE schemaname = 'scirag' AND 'scirag_reader' = ANY (roles) AND NOT ('scirag_api' = ANY (roles))$$,
  'every policy written for readers also binds scirag_api, which reads for them');

-- the API calls what readers could call; a function granted to readers after the wall
-- was built (a change placed after it) would fail inside every API call
SELECT is_empty(
  $$SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace
      AND has_function_privilege('scirag_reader', p.oid, 'EXECUTE')
      AND NOT has_function_privilege('scirag_api', p.oid, 'EXECUTE')$$,
  'scirag_api may run every function readers may run');

SELECT ok(NOT has_function_privilege('scirag_reader', 'scirag.kw_compact(int)', 'EXECUTE')
          AND NOT has_function_privilege('scirag_reader', 'scirag.kw_rebuild(int)', 'EXECUTE')
          AND NOT has_function_privilege('scirag_api', 'scirag.kw_compact(int)', 'EXECUTE'),
  'loader-only maintenance (kw_compact, kw_rebuild) stays out of reach of readers and of the API');

-- ---------------------------------------------------------------- as a real reader
-- A throwaway LOGIN member of scirag_reader, as a human or an adapter would connect.
SELECT tests.login_role('reader', 'scirag_reader') AS reader \gset
CREATE FUNCTION tests.ceilings_seen() RETURNS text[]
LANGUAGE sql STABLE AS $$ SELECT ARRAY(SELECT role_name::text FROM scirag.role_ceilings ORDER BY 1) $$;
SELECT tests.through_api('tests.ceilings_seen()') AS _ \gset
SELECT tests.as_role(:'reader');

SELECT throws_ok($$SELECT count(*) FROM scirag.role_ceilings$$, '42501', NULL,
  'a reader cannot read the ceilings table');

-- The second wall: scirag_api reads ceilings for the caller and sees only the caller's.
SELECT is(tests.ceilings_seen(), ARRAY['scirag_reader'],
  'through the API a reader sees only the ceiling that applies to it');
SELECT is(scirag.current_scope()->>'role', :'reader', 'current_scope names the caller, not scirag_api');

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

SELECT throws_ok($$EXPLAIN SELECT 1 FROM scirag.documents WHERE external_id = 'x'$$, '42501', NULL,
  'a reader cannot EXPLAIN an evidence table');

SELECT throws_ok($$SELECT count(*) FROM scirag.settings$$, '42501', NULL,
  'a reader cannot read scirag.settings (model folder, python path)');

SELECT is((SELECT count(*) FROM pg_stats WHERE schemaname = 'scirag' AND tablename <> ALL (ARRAY['presets', 'retrieval_profiles', 'prompt_templates', 'answer_intents', 'kg_options'])
           AND tablename NOT LIKE 'eval\_%'), 0::bigint,
  'pg_stats shows a reader no statistics of evidence columns');

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
