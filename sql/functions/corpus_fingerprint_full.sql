-- Deploy scirag:functions/corpus_fingerprint_full
-- Split (issue 28): scirag.corpus_fingerprint_full, moved out of schema/eval_answers (sql/schema/eval_answers.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/corpus_fingerprint_full` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.corpus_fingerprint_full()
RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  fp jsonb := scirag.corpus_fingerprint();
  t text;
  n bigint;
BEGIN
  -- Graph tables arrive with the graph layer; count them when they exist.
  FOREACH t IN ARRAY ARRAY['kg_entities', 'kg_relationships', 'kg_communities'] LOOP
    IF to_regclass('scirag.' || t) IS NOT NULL THEN
      EXECUTE format('SELECT count(*) FROM scirag.%I', t) INTO n;
    ELSE
      n := 0;
    END IF;
    fp := fp || jsonb_build_object(t, n);
  END LOOP;
  RETURN fp;
END $$;
COMMENT ON FUNCTION scirag.corpus_fingerprint_full() IS
  'corpus_fingerprint() plus graph counts (entities, relationships, communities; 0 while the graph tables do not exist), over what the caller can see: stored with every answer and retrieval evaluation run.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.corpus_fingerprint_full() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.corpus_fingerprint_full() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.corpus_fingerprint_full() TO scirag_loader, scirag_reader;
COMMIT;
