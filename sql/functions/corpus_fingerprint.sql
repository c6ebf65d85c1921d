-- Deploy scirag:functions/corpus_fingerprint
-- Split (issue 28): scirag.corpus_fingerprint, moved out of schema/eval (sql/schema/eval.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/corpus_fingerprint` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.corpus_fingerprint()
RETURNS jsonb
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  -- Counts what the caller can see: run it as the loader for the whole corpus.
  SELECT jsonb_build_object(
    'documents', (SELECT count(*) FROM scirag.documents),
    'chunks', (SELECT count(*) FROM scirag.chunks),
    'embedded_chunks', (SELECT count(*) FROM scirag.chunks WHERE embedding IS NOT NULL),
    'embedding_versions', (SELECT coalesce(jsonb_agg(DISTINCT embedding_version), '[]')
                           FROM scirag.chunks WHERE embedding_version IS NOT NULL),
    'latest_ingestion', (SELECT max(ingested_at) FROM scirag.documents))
$$;
COMMENT ON FUNCTION scirag.corpus_fingerprint() IS
  'Document and chunk counts, embedding versions and latest ingestion time of the visible corpus, stored with every evaluation run.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.corpus_fingerprint() OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.corpus_fingerprint() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.corpus_fingerprint() TO scirag_loader, scirag_reader;
COMMIT;
