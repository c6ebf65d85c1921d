-- Deploy scirag:functions/chunk_get
-- Split (issue 28): scirag.chunk_get, moved out of functions/reader_api (sql/functions/reader_api@v1.3.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/chunk_get` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.chunk_get(id bigint)
RETURNS TABLE (chunk_id bigint, document_id bigint, external_id text, title text, ordinal int, kind text,
               section_path text, heading text, is_table boolean, content text, line_start int, line_end int,
               page_start int, page_end int, license text, source text, retracted boolean)
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT c.id, c.document_id, d.external_id, d.title, c.ordinal, c.kind, c.section_path, c.heading,
         c.is_table, c.content, c.line_start, c.line_end, c.page_start, c.page_end, c.license::text,
         c.source, c.retracted
  FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
  WHERE c.id = chunk_get.id
$$;
COMMENT ON FUNCTION scirag.chunk_get(bigint) IS
  'One chunk with its document''s id, manifest id and title, when the caller may see it (else no row). Reader API (security wall).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.chunk_get(bigint) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.chunk_get(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.chunk_get(bigint) TO scirag_loader, scirag_reader;
COMMIT;
