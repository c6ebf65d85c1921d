-- Deploy scirag:functions/all_visible
-- Split (issue 28): scirag.documents_all_visible and scirag.external_ids_all_visible, moved out of functions/reader_api (sql/functions/reader_api@v1.3.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/all_visible` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.documents_all_visible(ids bigint[])
RETURNS boolean
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT NOT EXISTS (SELECT 1 FROM unnest(ids) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = x))
$$;
COMMENT ON FUNCTION scirag.documents_all_visible(bigint[]) IS
  'True when the caller may see every document id listed (an empty or NULL list: true). For policies of tables readers read directly (eval_*). Reader API (security wall).';

CREATE OR REPLACE FUNCTION scirag.external_ids_all_visible(ids text[])
RETURNS boolean
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT NOT EXISTS (SELECT 1 FROM unnest(ids) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.external_id = x))
$$;
COMMENT ON FUNCTION scirag.external_ids_all_visible(text[]) IS
  'True when the caller may see a document for every manifest id listed (an empty or NULL list: true). For policies of tables readers read directly (eval_*). Reader API (security wall).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.documents_all_visible(bigint[]) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.documents_all_visible(bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.documents_all_visible(bigint[]) TO scirag_loader, scirag_reader;
ALTER FUNCTION scirag.external_ids_all_visible(text[]) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.external_ids_all_visible(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.external_ids_all_visible(text[]) TO scirag_loader, scirag_reader;
COMMIT;
