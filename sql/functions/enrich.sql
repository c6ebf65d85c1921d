-- Deploy scirag:functions/enrich
-- Parent-context enrichment (VulcanLab retrieval step 3): a chunk with fewer than
-- min_word_count words walks up its section chain until the enclosing section
-- holds enough; text over max_word_count is cut by the sliding window. Every read
-- goes through scirag.chunks and scirag.documents as the caller (SECURITY INVOKER),
-- so row-level security decides what a parent may contribute.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.enrich_chunks(chunk_ids bigint[], min_word_count int DEFAULT 150,
                                                max_word_count int DEFAULT 1000)
RETURNS TABLE (chunk_id bigint, content text, depth int, reached_root boolean, enriched boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  r record;
  par record;
  seen bigint[] := '{}';
  body text;
  cur_parent int;
  cur_content text;
  cur_path text;
  prefix text;
  budget int;
  pbody text;
  combined text;
  loc int[];
  met boolean;
  d int;
  headings text[];
  headings_doc bigint;
BEGIN
  IF min_word_count IS NULL OR max_word_count IS NULL OR min_word_count < 0 OR max_word_count < 1 THEN
    RAISE EXCEPTION 'scirag.enrich_chunks: min_word_count must be >= 0 and max_word_count >= 1'
      USING ERRCODE = '22023';
  END IF;
  FOR r IN
    SELECT c.id, c.document_id, c.parent_ordinal, c.content AS c_content, c.section_path AS c_path, dd.title
    FROM unnest(chunk_ids) WITH ORDINALITY AS u(id, pos)
    JOIN scirag.chunks c ON c.id = u.id
    JOIN scirag.documents dd ON dd.id = c.document_id
    ORDER BY u.pos
  LOOP
    CONTINUE WHEN r.id = ANY (seen);
    seen := seen || r.id;
    body := scirag.chunk_body(r.c_content, r.title, r.c_path);
    IF scirag.word_count(body) >= min_word_count THEN
      chunk_id := r.id; content := r.c_content; depth := 0; reached_root := false; enriched := false;
      RETURN NEXT;
      CONTINUE;
    END IF;
    -- Walk up: each hop takes the whole enclosing section, which contains the chunk.
    d := 0;
    met := false;
    cur_parent := r.parent_ordinal;
    combined := NULL;
    WHILE cur_parent IS NOT NULL LOOP
      SELECT p.parent_ordinal, p.content AS p_content, p.section_path AS p_path INTO par
      FROM scirag.chunks p WHERE p.document_id = r.document_id AND p.ordinal = cur_parent;
      EXIT WHEN NOT FOUND;          -- a parent the caller may not read ends the walk
      d := d + 1;
      pbody := scirag.chunk_body(par.p_content, r.title, par.p_path);
      cur_content := par.p_content;
      cur_path := par.p_path;
      loc := scirag.locate_text(pbody, body);
      IF loc IS NULL THEN
        -- A parent that does not repeat its child (other loaders): parent + child.
        combined := pbody || E'\n\n' || body;
        loc := ARRAY[length(pbody) + 3, length(combined) + 1];
      ELSE
        combined := pbody;
      END IF;
      cur_parent := par.parent_ordinal;
      IF scirag.word_count(combined) >= min_word_count THEN
        met := true;
        EXIT;
      END IF;
    END LOOP;
    IF d = 0 THEN
      -- Nothing above the chunk: a fallback, the chunk as it is.
      chunk_id := r.id; content := r.c_content; depth := 0; reached_root := true; enriched := false;
      RETURN NEXT;
      CONTINUE;
    END IF;
    -- The ancestor's own title / section-path prefix, then its (windowed) text;
    -- the whole content, prefix included, stays within max_word_count words.
    prefix := left(cur_content, length(cur_content) - length(scirag.chunk_body(cur_content, r.title, cur_path)));
    budget := greatest(1, max_word_count - scirag.word_count(prefix));
    IF scirag.word_count(combined) > budget THEN
      IF headings_doc IS DISTINCT FROM r.document_id THEN
        headings := ARRAY(SELECT h.heading FROM scirag.chunks h
                          WHERE h.document_id = r.document_id AND h.kind = 'section' AND h.heading IS NOT NULL);
        headings_doc := r.document_id;
      END IF;
      combined := scirag.window_text(combined, loc[1], loc[2], budget, headings);
    END IF;
    chunk_id := r.id;
    content := prefix || combined;
    depth := d;
    reached_root := NOT met;
    enriched := true;
    RETURN NEXT;
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.enrich_chunks(bigint[], int, int) IS
  'Parent-context enrichment (VulcanLab step 3). One row per readable chunk, in input order: a chunk under min_word_count words (title/path prefix not counted) is replaced by its nearest enclosing section that reaches min_word_count (depth = hops; reached_root when even the top section falls short, which is then used), cut by the sliding window so that the content, prefix included, has at most max_word_count words (headings and the original chunk kept, whole sentences). A short chunk without a parent is returned as it is (reached_root, not enriched: a fallback). Unreadable ids are dropped. Metrics: scirag.enrichment_metrics.';

CREATE OR REPLACE FUNCTION scirag.enrichment_metrics(chunk_ids bigint[], min_word_count int DEFAULT 150,
                                                     max_word_count int DEFAULT 1000)
RETURNS jsonb
LANGUAGE sql STABLE
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

REVOKE ALL ON FUNCTION scirag.enrich_chunks(bigint[], int, int), scirag.enrichment_metrics(bigint[], int, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.enrich_chunks(bigint[], int, int), scirag.enrichment_metrics(bigint[], int, int)
  TO scirag_reader, scirag_loader;
COMMIT;
