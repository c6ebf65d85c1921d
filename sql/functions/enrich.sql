-- Deploy scirag:functions/enrich
-- Reworked (issue 16): a chunk's body is chunks.body (stored by the loader), no
-- longer its content with the title/section prefix stripped here; enrich_chunks
-- returns the body of what it returns too (the answerer shows bodies), so its
-- result type changes (dropped and created again).
-- Parent-context enrichment (VulcanLab retrieval step 3): a chunk with fewer than
-- min_word_count words walks up its section chain until the enclosing section
-- holds enough; text over max_word_count is cut by the sliding window. Both functions
-- run as scirag_api (SECURITY DEFINER, owner scirag_api, declared below), which owns no
-- table: every read of scirag.chunks and scirag.documents goes through row-level security
-- keyed on the caller (scirag.scope_role()), which decides what a parent may contribute.
-- Reworked again (issue 26): chunk_ids holds at most 1,000 ids (scirag.check_limit).
BEGIN;

DROP FUNCTION scirag.enrich_chunks(bigint[], int, int);
CREATE FUNCTION scirag.enrich_chunks(chunk_ids bigint[], min_word_count int DEFAULT 150,
                                                max_word_count int DEFAULT 1000)
RETURNS TABLE (chunk_id bigint, content text, depth int, reached_root boolean, enriched boolean, body text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  ids bigint[];
  depths int[];
  docs bigint[];
  contents text[];
  bodies text[];
  words int[];
  n int;
  i int := 1;
  j int;
  sel int;
  last int;
  own text;           -- the input chunk's body
  combined text;
  loc int[];
  met boolean;
  prefix text;
  budget int;
  headings text[];
  headings_doc bigint;
BEGIN
  PERFORM scirag.check_limit(cardinality(chunk_ids), 'the number of chunk_ids', 'scirag.enrich_chunks');
  IF min_word_count IS NULL OR max_word_count IS NULL OR min_word_count < 0 OR max_word_count < 1 THEN
    RAISE EXCEPTION 'scirag.enrich_chunks: min_word_count must be >= 0 and max_word_count >= 1'
      USING ERRCODE = '22023';
  END IF;
  -- Each readable input chunk (first occurrence, input order) with its chain of
  -- enclosing sections, read in one statement (row-level security applies to every
  -- row: a section the caller may not read ends the chain). The walk goes up only
  -- from rows still short of min_word_count.
  WITH RECURSIVE inp AS (
    SELECT DISTINCT ON (u.id) u.id, u.pos
    FROM unnest(chunk_ids) WITH ORDINALITY AS u(id, pos) WHERE u.id IS NOT NULL
    ORDER BY u.id, u.pos),
  up AS (
    SELECT inp.id AS start_id, inp.pos, 0 AS hop, c.document_id, c.parent_ordinal, c.content AS c_content,
           c.body AS c_body
    FROM inp
    JOIN scirag.chunks c ON c.id = inp.id
    JOIN scirag.documents d ON d.id = c.document_id
    UNION ALL
    SELECT up.start_id, up.pos, up.hop + 1, p.document_id, p.parent_ordinal, p.content,
           p.body
    FROM up
    JOIN scirag.chunks p ON p.document_id = up.document_id AND p.ordinal = up.parent_ordinal
    JOIN scirag.documents d ON d.id = p.document_id
    WHERE up.hop < 64 AND scirag.word_count(up.c_body) < min_word_count)
  SELECT array_agg(up.start_id ORDER BY up.pos, up.hop), array_agg(up.hop ORDER BY up.pos, up.hop),
         array_agg(up.document_id ORDER BY up.pos, up.hop), array_agg(up.c_content ORDER BY up.pos, up.hop),
         array_agg(up.c_body ORDER BY up.pos, up.hop)
  INTO ids, depths, docs, contents, bodies
  FROM up;
  n := coalesce(cardinality(ids), 0);

  WHILE i <= n LOOP
    -- rows i..last are one input chunk (hop 0) and the sections above it
    last := i;
    WHILE last < n AND ids[last + 1] = ids[i] LOOP
      last := last + 1;
    END LOOP;
    own := bodies[i];
    chunk_id := ids[i];
    IF scirag.word_count(own) >= min_word_count THEN
      content := contents[i]; body := own; depth := 0; reached_root := false; enriched := false;
      RETURN NEXT;
    ELSIF last = i THEN
      -- Nothing (readable) above the chunk: a fallback, the chunk as it is.
      content := contents[i]; body := own; depth := 0; reached_root := true; enriched := false;
      RETURN NEXT;
    ELSE
      -- Walk up: each hop takes the whole enclosing section, which contains the chunk.
      met := false;
      FOR j IN i + 1 .. last LOOP
        sel := j;   -- (a FOR variable does not outlive its loop)
        loc := scirag.locate_text(bodies[j], own);
        IF loc IS NULL THEN
          -- A parent that does not repeat its child (other loaders): parent + child.
          combined := bodies[j] || E'\n\n' || own;
          loc := ARRAY[length(bodies[j]) + 3, length(combined) + 1];
        ELSE
          combined := bodies[j];
        END IF;
        IF scirag.word_count(combined) >= min_word_count THEN
          met := true;
          EXIT;
        END IF;
      END LOOP;
      j := sel;
      -- The section's own title / section-path prefix, then its (windowed) text;
      -- the whole content, prefix included, stays within max_word_count words.
      prefix := left(contents[j], length(contents[j]) - length(bodies[j]));
      budget := greatest(1, max_word_count - scirag.word_count(prefix));
      IF scirag.word_count(combined) > budget THEN
        IF headings_doc IS DISTINCT FROM docs[i] THEN
          headings := ARRAY(SELECT h.heading FROM scirag.chunks h
                            WHERE h.document_id = docs[i] AND h.kind = 'section' AND h.heading IS NOT NULL);
          headings_doc := docs[i];
        END IF;
        combined := scirag.window_text(combined, loc[1], loc[2], budget, headings);
      END IF;
      content := prefix || combined;
      body := combined;
      depth := depths[j];
      reached_root := NOT met;
      enriched := true;
      RETURN NEXT;
    END IF;
    i := last + 1;
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.enrich_chunks(bigint[], int, int) IS
  'Parent-context enrichment (VulcanLab step 3). One row per readable chunk, in input order: a chunk under min_word_count words (title/path prefix not counted) is replaced by its nearest enclosing section that reaches min_word_count (depth = hops; reached_root when even the top section falls short, which is then used), cut by the sliding window so that the content, prefix included, has at most max_word_count words (headings and the original chunk kept, whole sentences). A short chunk without a parent is returned as it is (reached_root, not enriched: a fallback). body is the returned text without the title/path prefix (chunks.body when not enriched). Unreadable ids are dropped. Metrics: scirag.enrichment_metrics.';

CREATE OR REPLACE FUNCTION scirag.enrichment_metrics(chunk_ids bigint[], min_word_count int DEFAULT 150,
                                                     max_word_count int DEFAULT 1000)
RETURNS jsonb
LANGUAGE sql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_build_object(
    'chunks', count(*),
    'enriched_count', count(*) FILTER (WHERE e.enriched),
    'enrichment_percentage', coalesce(round(100.0 * count(*) FILTER (WHERE e.enriched) / nullif(count(*), 0), 2), 0),
    'average_traversal_depth', coalesce(round(avg(e.depth) FILTER (WHERE e.enriched), 3), 0),
    'traversal_reached_root_count', count(*) FILTER (WHERE e.reached_root AND e.enriched),
    'fallback_count', count(*) FILTER (WHERE e.reached_root AND NOT e.enriched))
  FROM scirag.enrich_chunks(chunk_ids, min_word_count, max_word_count) AS e
$$;
COMMENT ON FUNCTION scirag.enrichment_metrics(bigint[], int, int) IS
  'Enrichment metrics of one enrich_chunks call (content-free, safe for traces): chunks, enriched_count, enrichment_percentage (% of chunks enriched), average_traversal_depth (mean hops over enriched chunks), traversal_reached_root_count (enriched but the top section was still short), fallback_count (short and nothing above it). The same aggregates can be taken over enrich_chunks'' own columns.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API functions
-- run as scirag_api, which owns no table, so row-level security keyed on the caller
-- (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.enrich_chunks(bigint[], int, int) OWNER TO scirag_api;
ALTER FUNCTION scirag.enrichment_metrics(bigint[], int, int) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.enrich_chunks(bigint[], int, int), scirag.enrichment_metrics(bigint[], int, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.enrich_chunks(bigint[], int, int), scirag.enrichment_metrics(bigint[], int, int)
  TO scirag_reader, scirag_api, scirag_loader;
-- The safety net: the same settings for every listed API function (tests/pgtap/01_rls_sweep.sql).
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
