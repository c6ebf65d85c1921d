-- Deploy scirag:functions/reader_wall_apply
-- The reader wall of policies/reader_wall as a function, so that it can be applied
-- again. CREATE OR REPLACE FUNCTION (every `sqitch rework` of a function) resets
-- SECURITY DEFINER, owner rules and the pinned path of an API function. Up to @v1.2 the
-- wall change had to stay last in the plan; a release freezes it, so a rework after a
-- release ends its deploy script and its revert script with
--     DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
-- which puts every API function (scirag.reader_wall_functions()) back behind the wall,
-- closes any new evidence table to readers, and lets scirag_api run what readers run.
-- tests/pgtap/01_rls_sweep.sql fails when a rework forgets it.
BEGIN;
CREATE OR REPLACE FUNCTION scirag.apply_reader_wall()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  r record;
  f record;
  p record;
  missing text;
BEGIN
  -- 1. scirag_api may read what readers could read, plus settings and ceilings; readers
  --    lose every privilege on each relation not open to them (configuration, eval_*).
  FOR r IN
    SELECT c.oid::regclass AS rel, c.relname,
           has_table_privilege('scirag_reader', c.oid, 'SELECT') AS whole,
           ARRAY(SELECT quote_ident(a.attname) FROM pg_attribute a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                   AND has_column_privilege('scirag_reader', c.oid, a.attnum, 'SELECT')) AS cols
    FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S')
  LOOP
    IF r.whole OR r.relname IN ('settings', 'role_ceilings') THEN
      EXECUTE format('GRANT SELECT ON %s TO scirag_api', r.rel);
    ELSIF cardinality(r.cols) > 0 THEN
      EXECUTE format('GRANT SELECT (%s) ON %s TO scirag_api', array_to_string(r.cols, ', '), r.rel);
    END IF;
    IF NOT scirag.reader_open_table(r.relname) THEN
      EXECUTE format('REVOKE ALL ON %s FROM scirag_reader', r.rel);
      IF cardinality(r.cols) > 0 THEN
        EXECUTE format('REVOKE ALL (%s) ON %s FROM scirag_reader', array_to_string(r.cols, ', '), r.rel);
      END IF;
    END IF;
  END LOOP;
  -- 2. scirag_api may run what readers may run (explicit grants only).
  FOR f IN
    SELECT p2.oid::regprocedure AS fn FROM pg_proc p2
    WHERE p2.pronamespace = 'scirag'::regnamespace
      AND EXISTS (SELECT 1 FROM aclexplode(p2.proacl) a
                  WHERE a.grantee = 'scirag_reader'::regrole AND a.privilege_type = 'EXECUTE')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO scirag_api', f.fn);
  END LOOP;
  -- 3. The API runs as scirag_api with a pinned search_path.
  SELECT string_agg(n, ', ') INTO missing FROM unnest(scirag.reader_wall_functions()) AS n
  WHERE NOT EXISTS (SELECT 1 FROM pg_proc p2 WHERE p2.pronamespace = 'scirag'::regnamespace AND p2.proname = n);
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'scirag.apply_reader_wall: listed API function(s) not found: %', missing;
  END IF;
  FOR f IN
    SELECT p2.oid::regprocedure AS fn FROM pg_proc p2
    WHERE p2.pronamespace = 'scirag'::regnamespace AND p2.proname = ANY (scirag.reader_wall_functions())
  LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO scirag_api', f.fn);
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', f.fn);
    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f.fn);
  END LOOP;
  -- 4. Policies written for readers by role bind scirag_api too.
  FOR p IN SELECT * FROM pg_policies
           WHERE schemaname = 'scirag' AND 'scirag_reader' = ANY (roles) AND NOT ('scirag_api' = ANY (roles))
  LOOP
    EXECUTE format('ALTER POLICY %I ON scirag.%I TO %s', p.policyname, p.tablename,
                   (SELECT string_agg(quote_ident(x), ', ') FROM unnest(p.roles || 'scirag_api'::name) AS x));
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.apply_reader_wall() IS
  'Applies the reader wall again (grants, revokes, SECURITY DEFINER owned by scirag_api with a pinned search_path for every reader_wall_functions() name, policies binding scirag_api); idempotent. Every function rework after a release ends its deploy and revert scripts with it.';
-- only the deployer runs it (it changes owners and grants)
REVOKE ALL ON FUNCTION scirag.apply_reader_wall() FROM PUBLIC;
COMMIT;
