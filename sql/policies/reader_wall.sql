-- Deploy scirag:policies/reader_wall
-- The security wall (issue 13 item 1; README "Threat model and residual limits").
-- A reader that can SELECT an evidence table can also EXPLAIN (ANALYZE) it: index
-- conditions on leakproof operators run before the row-level-security filter, so
-- "Rows Removed by Filter" counts hidden rows, and plain EXPLAIN estimates and
-- pg_stats reflect them. So readers hold no privilege at all on evidence tables (nor
-- on settings and role_ceilings) and reach evidence only through the reader API:
-- SECURITY DEFINER functions owned by the NOLOGIN role scirag_api, which owns no table
-- and so stays subject to the FORCEd policies, keyed on the caller (scope_role()).
-- Row-level security remains the second wall: an id a reader passes to citation,
-- rerank, consolidate, enrich or mmr is filtered like any other row.
--
-- Keep this change LAST in sqitch.plan: CREATE OR REPLACE FUNCTION (a rework) resets
-- SECURITY DEFINER, and the verify script fails for any listed function left outside.
BEGIN;

-- The reader API: every function a reader calls that reads evidence, settings or
-- ceilings (directly or in Python). Listed by name, so each overload is covered and a
-- signature change in a rework needs no edit here. tests/pgtap/01_rls_sweep.sql
-- checks that no reader-executable function reading evidence is missing.
CREATE FUNCTION scirag.reader_wall_functions()
RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT ARRAY[
    -- entry points
    'retrieve', 'retrieve_config', 'search_vector', 'search_keyword', 'search_hyde', 'search_graph',
    'search_community', 'search_community_chunks', 'rerank', 'consolidate', 'enrich_chunks',
    'enrichment_metrics', 'mmr_select', 'answer', 'answer_text', 'references', 'cited_by',
    'current_scope', 'embed_query', 'corpus_fingerprint', 'corpus_fingerprint_full',
    'documents_visible', 'chunk_get', 'chunk_neighbours', 'document_outline', 'entities_visible', 'documents_all_visible',
    'external_ids_all_visible',
    -- helpers a reader may call directly that read evidence or settings
    'scope_ceiling', 'scope_excluded_documents', 'plpy_bootstrap', 'hyde_passage',
    'graph_question_entities', 'graph_seed_entities', 'section_chain', 'consolidation_groups',
    'consolidation_render', 'retrieve_rerank', 'retrieve_rows',
    -- PL/Python that reads only settings (python_path), through plpy_bootstrap
    'text_units', 'classify_intent']
$$;
COMMENT ON FUNCTION scirag.reader_wall_functions() IS
  'Names of the reader API functions: SECURITY DEFINER, owned by scirag_api, search_path pinned (policies/reader_wall).';

-- Tables readers keep: configuration, not evidence (and the evaluation tables, which
-- have their own policies for BI readers). Everything else in the schema is closed to them.
CREATE FUNCTION scirag.reader_open_table(relname name)
RETURNS boolean
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT relname IN ('answer_intents', 'prompt_templates', 'presets', 'retrieval_profiles', 'kg_options')
      OR relname LIKE 'eval\_%'
$$;
COMMENT ON FUNCTION scirag.reader_open_table(name) IS
  'True for the tables and views of schema scirag on which scirag_reader may hold privileges: configuration and the evaluation tables (eval_*, scoped by their own policies). Every other relation is closed to readers (policies/reader_wall).';
REVOKE ALL ON FUNCTION scirag.reader_wall_functions(), scirag.reader_open_table(name) FROM PUBLIC;
-- (the lists are no secret: anyone may check a function or table against them)
GRANT EXECUTE ON FUNCTION scirag.reader_wall_functions(), scirag.reader_open_table(name) TO scirag_reader, scirag_loader;

DO $$
DECLARE
  r record;
  f record;
  missing text;
BEGIN
  -- 1. scirag_api may read what readers could read (table or column grants), plus the
  --    settings and ceilings the API needs; then readers lose every privilege on each
  --    relation not open to them. Nothing is granted to scirag_api beyond SELECT.
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

  -- 2. scirag_api may run what readers may run (explicit grants only: a function is
  --    EXECUTE-able by PUBLIC until `scirag db init` revokes that, so PUBLIC does not count).
  FOR f IN
    SELECT p.oid::regprocedure AS fn FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace
      AND EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                  WHERE a.grantee = 'scirag_reader'::regrole AND a.privilege_type = 'EXECUTE')
  LOOP
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO scirag_api', f.fn);
  END LOOP;

  -- 3. The API runs as scirag_api, with a pinned search_path (every name in it is
  --    schema-qualified; pg_temp last, so a caller's temporary objects shadow nothing).
  SELECT string_agg(n, ', ') INTO missing FROM unnest(scirag.reader_wall_functions()) AS n
  WHERE NOT EXISTS (SELECT 1 FROM pg_proc p WHERE p.pronamespace = 'scirag'::regnamespace AND p.proname = n);
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'policies/reader_wall: listed API function(s) not found: %', missing;
  END IF;
  FOR f IN
    SELECT p.oid::regprocedure AS fn FROM pg_proc p
    WHERE p.pronamespace = 'scirag'::regnamespace AND p.proname = ANY (scirag.reader_wall_functions())
  LOOP
    EXECUTE format('ALTER FUNCTION %s OWNER TO scirag_api', f.fn);
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', f.fn);
    EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f.fn);
  END LOOP;
END $$;

-- Policies written for readers by role (configuration tables: presets, prompt
-- templates, ...) bind scirag_api too, which now reads those rows for them. The
-- evidence policies are TO PUBLIC and bind it already.
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT * FROM pg_policies
           WHERE schemaname = 'scirag' AND 'scirag_reader' = ANY (roles) AND NOT ('scirag_api' = ANY (roles))
  LOOP
    EXECUTE format('ALTER POLICY %I ON scirag.%I TO %s', p.policyname, p.tablename,
                   (SELECT string_agg(quote_ident(r), ', ') FROM unnest(p.roles || 'scirag_api'::name) AS r));
  END LOOP;
END $$;

-- Ceilings are read as scirag_api inside the API: the policy follows the caller too.
ALTER POLICY own_ceiling ON scirag.role_ceilings
  USING (to_regrole(quote_ident(role_name)) = role_oid AND pg_has_role(scirag.scope_role(), role_oid, 'MEMBER'));
COMMIT;
