-- Deploy scirag:functions/retrieve_rows
-- Split (issue 28): scirag.retrieve_rows, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_rows` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_rows(candidates scirag.ranked_hit[], k int)
RETURNS TABLE (rank int, chunk_id bigint, document_id bigint, external_id text, score double precision,
               layers jsonb, title text, section_path text, content text, is_table boolean, citation jsonb)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT x.o::int, c.id, d.id, d.external_id, x.score, x.layers, d.title, c.section_path, c.content,
         c.is_table, scirag.citation(d, c)
  FROM unnest(candidates[1:k]) WITH ORDINALITY AS x(chunk_id, score, layers, o)
  JOIN scirag.chunks c ON c.id = x.chunk_id
  JOIN scirag.documents d ON d.id = c.document_id
  ORDER BY x.o;
END $$;
COMMENT ON FUNCTION scirag.retrieve_rows(scirag.ranked_hit[], int) IS
  'Formatting stage: the first k candidates as retrieve''s result rows (rank, document columns, content, citation), read through row-level security.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.retrieve_rows(scirag.ranked_hit[], int) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve_rows(scirag.ranked_hit[], int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_rows(scirag.ranked_hit[], int) TO scirag_reader, scirag_loader;
COMMIT;
