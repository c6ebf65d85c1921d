-- Revert scirag:policies/reader_wall
-- Readers get back what scirag_api was given (it mirrored the readers' grants, plus
-- settings and role_ceilings, which readers could read before); the API functions run
-- as the caller again, owned by the reverting admin as before the wall.
BEGIN;
ALTER POLICY own_ceiling ON scirag.role_ceilings
  USING (to_regrole(quote_ident(role_name)) = role_oid AND pg_has_role(current_user, role_oid, 'MEMBER'));

DO $$
DECLARE
  r record;
  f record;
BEGIN
  FOR r IN
    SELECT c.oid::regclass AS rel,
           has_table_privilege('scirag_api', c.oid, 'SELECT') AS whole,
           ARRAY(SELECT quote_ident(a.attname) FROM pg_attribute a
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                   AND has_column_privilege('scirag_api', c.oid, a.attnum, 'SELECT')) AS cols
    FROM pg_class c
    WHERE c.relnamespace = 'scirag'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S')
  LOOP
    IF r.whole THEN
      EXECUTE format('GRANT SELECT ON %s TO scirag_reader', r.rel);
      EXECUTE format('REVOKE ALL ON %s FROM scirag_api', r.rel);
    ELSIF cardinality(r.cols) > 0 THEN
      EXECUTE format('GRANT SELECT (%s) ON %s TO scirag_reader', array_to_string(r.cols, ', '), r.rel);
      EXECUTE format('REVOKE ALL (%s) ON %s FROM scirag_api', array_to_string(r.cols, ', '), r.rel);
    END IF;
  END LOOP;
  FOR f IN
    SELECT p.oid::regprocedure AS fn, p.proowner = 'scirag_api'::regrole AS walled FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace
      AND (p.proowner = 'scirag_api'::regrole OR has_function_privilege('scirag_api', p.oid, 'EXECUTE'))
  LOOP
    IF f.walled THEN
      EXECUTE format('ALTER FUNCTION %s SECURITY INVOKER', f.fn);
      EXECUTE format('ALTER FUNCTION %s OWNER TO %I', f.fn, current_user);
    END IF;
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM scirag_api', f.fn);
  END LOOP;
END $$;

DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT * FROM pg_policies
           WHERE schemaname = 'scirag' AND 'scirag_api' = ANY (roles) AND 'scirag_reader' = ANY (roles)
  LOOP
    EXECUTE format('ALTER POLICY %I ON scirag.%I TO %s', p.policyname, p.tablename,
                   (SELECT string_agg(quote_ident(r), ', ') FROM unnest(array_remove(p.roles, 'scirag_api'::name)) AS r));
  END LOOP;
END $$;

DROP FUNCTION scirag.reader_wall_functions(), scirag.reader_open_table(name);
COMMIT;
