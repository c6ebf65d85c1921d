-- Deploy scirag:functions/chunk_neighbours
-- Split (issue 28): scirag.chunk_neighbours, moved out of functions/reader_api (sql/functions/reader_api@v1.3.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/chunk_neighbours` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.chunk_neighbours(id bigint, n int DEFAULT 1)
RETURNS TABLE (chunk_id bigint, ordinal int, kind text, section_path text, is_table boolean, content text,
               line_start int, line_end int, page_start int, page_end int)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  doc bigint;
  ord int;
BEGIN
  IF n IS NULL OR n < 0 OR n > 20 THEN
    RAISE EXCEPTION 'scirag.chunk_neighbours: n must be an integer between 0 and 20 (got %)', coalesce(n::text, 'NULL')
      USING ERRCODE = '22023';
  END IF;
  SELECT c.document_id, c.ordinal INTO doc, ord FROM scirag.chunks c WHERE c.id = chunk_neighbours.id;
  IF doc IS NULL THEN
    RETURN;                                   -- unknown and hidden chunks alike: nothing
  END IF;
  -- The nearest n text chunks before and after (section chunks are parents, not neighbours).
  RETURN QUERY
  SELECT x.id, x.ordinal, x.kind, x.section_path, x.is_table, x.content, x.line_start, x.line_end,
         x.page_start, x.page_end
  FROM ((SELECT c.* FROM scirag.chunks c
         WHERE c.document_id = doc AND c.ordinal < ord AND c.kind <> 'section' ORDER BY c.ordinal DESC LIMIT n)
        UNION ALL
        (SELECT c.* FROM scirag.chunks c
         WHERE c.document_id = doc AND c.ordinal > ord AND c.kind <> 'section' ORDER BY c.ordinal LIMIT n)) AS x
  ORDER BY x.ordinal;
END $$;
COMMENT ON FUNCTION scirag.chunk_neighbours(bigint, integer) IS
  'The n (0..20) nearest text chunks before and after a chunk of the same document, in reading order; nothing for a chunk the caller may not see. Reader API (security wall).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.chunk_neighbours(bigint, integer) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.chunk_neighbours(bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.chunk_neighbours(bigint, integer) TO scirag_loader, scirag_reader;
COMMIT;
