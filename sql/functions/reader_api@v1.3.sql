-- Deploy scirag:functions/reader_api
-- What readers used to SELECT from documents and chunks directly, now that they hold
-- no privilege on evidence tables (security wall, issue 13): the visible documents'
-- public columns (no source_path, content_hash or Crossref record), one chunk, its
-- neighbours in reading order, a document's outline. policies/reader_wall makes them
-- SECURITY DEFINER owned by scirag_api, so every row still passes row-level security
-- keyed on the caller's ceiling: an id the caller may not see is simply not found.
BEGIN;

CREATE FUNCTION scirag.documents_visible(ref text DEFAULT NULL)
RETURNS TABLE (document_id bigint, external_id text, title text, authors text[], year int, journal text,
               doi text, arxiv_id text, license text, source text, retracted boolean, parser text,
               pages int, ingested_at timestamptz, metadata_inferred text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF length(ref) > 1024 THEN
    RAISE EXCEPTION 'scirag.documents_visible: ref is % characters long, at most 1024 allowed', length(ref)
      USING ERRCODE = '22023';
  END IF;
  -- Two statements, not "ref IS NULL OR ...": each keeps its own plan (an index probe for one ref).
  IF ref IS NULL THEN
    RETURN QUERY
    SELECT d.id, d.external_id, d.title, d.authors, d.year, d.journal, d.doi, d.arxiv_id, d.license::text,
           d.source, d.retracted, d.parser, d.pages, d.ingested_at, d.metadata_inferred
    FROM scirag.documents d ORDER BY d.id;
  ELSE
    RETURN QUERY
    SELECT d.id, d.external_id, d.title, d.authors, d.year, d.journal, d.doi, d.arxiv_id, d.license::text,
           d.source, d.retracted, d.parser, d.pages, d.ingested_at, d.metadata_inferred
    FROM scirag.documents d
    WHERE d.external_id = ref OR d.id = CASE WHEN ref ~ '^[0-9]{1,18}$' THEN ref::bigint END
    ORDER BY d.id;
  END IF;
END $$;
COMMENT ON FUNCTION scirag.documents_visible(text) IS
  'The documents the caller may see (all, or the one whose manifest id or numeric id is ref): public columns only, no server path. Reader API (security wall).';

CREATE FUNCTION scirag.chunk_get(id bigint)
RETURNS TABLE (chunk_id bigint, document_id bigint, external_id text, title text, ordinal int, kind text,
               section_path text, heading text, is_table boolean, content text, line_start int, line_end int,
               page_start int, page_end int, license text, source text, retracted boolean)
LANGUAGE sql STABLE
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

CREATE FUNCTION scirag.chunk_neighbours(id bigint, n int DEFAULT 1)
RETURNS TABLE (chunk_id bigint, ordinal int, kind text, section_path text, is_table boolean, content text,
               line_start int, line_end int, page_start int, page_end int)
LANGUAGE plpgsql STABLE
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
COMMENT ON FUNCTION scirag.chunk_neighbours(bigint, int) IS
  'The n (0..20) nearest text chunks before and after a chunk of the same document, in reading order; nothing for a chunk the caller may not see. Reader API (security wall).';

CREATE FUNCTION scirag.document_outline(id bigint)
RETURNS TABLE (chunk_id bigint, ordinal int, kind text, level int, section_path text, is_table boolean,
               line_start int, line_end int, page_start int, page_end int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT c.id, c.ordinal, c.kind, c.level, c.section_path, c.is_table, c.line_start, c.line_end,
         c.page_start, c.page_end
  FROM scirag.chunks c WHERE c.document_id = document_outline.id ORDER BY c.ordinal
$$;
COMMENT ON FUNCTION scirag.document_outline(bigint) IS
  'A visible document''s chunks in reading order, without text (location and section only). Reader API (security wall).';

CREATE FUNCTION scirag.entities_visible(ids bigint[])
RETURNS TABLE (entity_id bigint, name text, entity_type text, declared boolean, canonical_entity_id bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT e.id, e.name, e.entity_type, e.declared, e.canonical_entity_id
  FROM scirag.kg_entities e WHERE e.id = ANY (ids) ORDER BY e.id
$$;
COMMENT ON FUNCTION scirag.entities_visible(bigint[]) IS
  'The listed knowledge-graph entities the caller may see (an entity is visible through visible evidence, under a name that evidence shows), without their alias lists. Reader API (security wall).';

-- For policies of tables readers keep (evaluation rows visible only when every document
-- behind them is): such a policy runs as the reader, who may not read documents.
CREATE FUNCTION scirag.documents_all_visible(ids bigint[])
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT NOT EXISTS (SELECT 1 FROM unnest(ids) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = x))
$$;
COMMENT ON FUNCTION scirag.documents_all_visible(bigint[]) IS
  'True when the caller may see every document id listed (an empty or NULL list: true). For policies of tables readers read directly (eval_*). Reader API (security wall).';

CREATE FUNCTION scirag.external_ids_all_visible(ids text[])
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT NOT EXISTS (SELECT 1 FROM unnest(ids) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.external_id = x))
$$;
COMMENT ON FUNCTION scirag.external_ids_all_visible(text[]) IS
  'True when the caller may see a document for every manifest id listed (an empty or NULL list: true). For policies of tables readers read directly (eval_*). Reader API (security wall).';

REVOKE ALL ON FUNCTION scirag.documents_all_visible(bigint[]), scirag.external_ids_all_visible(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.documents_all_visible(bigint[]), scirag.external_ids_all_visible(text[])
  TO scirag_reader, scirag_loader;

REVOKE ALL ON FUNCTION scirag.entities_visible(bigint[]), scirag.documents_visible(text), scirag.chunk_get(bigint), scirag.chunk_neighbours(bigint, int),
  scirag.document_outline(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.entities_visible(bigint[]), scirag.documents_visible(text), scirag.chunk_get(bigint), scirag.chunk_neighbours(bigint, int),
  scirag.document_outline(bigint) TO scirag_reader, scirag_loader;
COMMIT;
