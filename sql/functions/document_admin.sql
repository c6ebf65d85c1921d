-- Deploy scirag:functions/document_admin
-- A personal library is managed, not only loaded (issue 25): the loader (or an API key
-- mapped to scirag_loader) deletes a document, clears its evidence before a re-parse
-- and corrects its metadata through these functions, one transaction each. They run
-- as the caller (SECURITY INVOKER): a reader holds no EXECUTE on them, so the REST and
-- MCP doors refuse it with "not allowed for this role" without a check of their own.
--
-- What a document leaves behind when it goes, layer by layer:
--   chunks, keyword postings (and their blocks and statistics, by the chunk trigger),
--   graph mentions, relationships, citations found in it, community evidence rows:
--   foreign keys with ON DELETE CASCADE;
--   communities whose summary used it: the documents_drop_graph_communities trigger;
--   entities only it mentioned (names read from its text) and their merge audit rows:
--   document_drop_orphans below;
--   citations of it by other documents: become unresolved (cited_document_id NULL).
-- ingest_reports keep their rows: they are the log of what each run did.
BEGIN;

CREATE FUNCTION scirag.document_ref(ref text, caller text DEFAULT 'scirag.document_ref')
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  found_id bigint;
  n int;
BEGIN
  IF ref IS NULL OR btrim(ref) = '' THEN
    RAISE EXCEPTION '%: give a document id or manifest id', caller USING ERRCODE = '22023';
  END IF;
  IF length(ref) > 1024 THEN
    RAISE EXCEPTION '%: ref is % characters long, at most 1024 allowed', caller, length(ref) USING ERRCODE = '22023';
  END IF;
  -- a manifest id first (an id may look like a number), then the numeric id
  SELECT d.id INTO found_id FROM scirag.documents d WHERE d.external_id = ref;
  IF found_id IS NULL AND ref ~ '^[0-9]{1,18}$' THEN
    SELECT d.id INTO found_id FROM scirag.documents d WHERE d.id = ref::bigint;
  END IF;
  RETURN found_id;
END $$;
COMMENT ON FUNCTION scirag.document_ref(text, text) IS
  'The id of the document whose manifest id (first) or numeric id is ref, among the rows the caller may see; NULL when there is none. Refuses an empty ref or one over 1,024 characters (22023).';

CREATE FUNCTION scirag.document_drop_orphans(candidates bigint[])
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  orphans bigint[];
  dropped int;
BEGIN
  -- Entities (of candidates) no evidence points at any more: their names and aliases
  -- were read from text that is gone (a declared one is made again by the next
  -- extraction that finds it). A tombstone goes with its survivor (one statement:
  -- the self-reference is checked at its end).
  orphans := ARRAY(
    SELECT e.id FROM scirag.kg_entities e
    WHERE e.id = ANY (candidates)
      AND NOT EXISTS (SELECT 1 FROM scirag.kg_mentions m WHERE m.entity_id = e.id OR m.original_entity_id = e.id)
      AND NOT EXISTS (SELECT 1 FROM scirag.kg_relationships r
                      WHERE r.source_entity_id = e.id OR r.target_entity_id = e.id));
  -- keep an entity another live entity was merged into (that tombstone still has evidence)
  orphans := ARRAY(
    SELECT o FROM unnest(orphans) o
    WHERE NOT EXISTS (SELECT 1 FROM scirag.kg_entities t WHERE t.canonical_entity_id = o AND NOT t.id = ANY (orphans)));
  DELETE FROM scirag.entity_resolution_audit a
  WHERE a.survivor_entity_id = ANY (orphans) OR a.merged_entity_id = ANY (orphans);
  DELETE FROM scirag.kg_entities e WHERE e.id = ANY (orphans);
  GET DIAGNOSTICS dropped = ROW_COUNT;
  RETURN dropped;
END $$;
COMMENT ON FUNCTION scirag.document_drop_orphans(bigint[]) IS
  'Deletes the entities among candidates that no mention or relationship points at any more (with their merge audit rows); returns how many. Called after a document''s evidence is gone.';

CREATE FUNCTION scirag.document_entities(doc bigint)
RETURNS bigint[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(array_agg(DISTINCT x), '{}') FROM (
    SELECT m.entity_id FROM scirag.kg_mentions m WHERE m.document_id = doc
    UNION ALL SELECT m.original_entity_id FROM scirag.kg_mentions m WHERE m.document_id = doc
    UNION ALL SELECT r.source_entity_id FROM scirag.kg_relationships r WHERE r.document_id = doc
    UNION ALL SELECT r.target_entity_id FROM scirag.kg_relationships r WHERE r.document_id = doc) s(x)
$$;
COMMENT ON FUNCTION scirag.document_entities(bigint) IS
  'Every entity a document''s graph evidence (mentions, relationships) points at.';

CREATE FUNCTION scirag.document_counts(doc bigint)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_build_object(
    'chunks', (SELECT count(*) FROM scirag.chunks c WHERE c.document_id = doc),
    -- one keyword posting per (lexeme, indexed chunk), fresh or filed into blocks
    'postings', (SELECT coalesce(sum(length(c.tsv)), 0) FROM scirag.chunks c
                 WHERE c.document_id = doc AND c.kind <> 'section'),
    'mentions', (SELECT count(*) FROM scirag.kg_mentions m WHERE m.document_id = doc),
    'relationships', (SELECT count(*) FROM scirag.kg_relationships r WHERE r.document_id = doc),
    'citations', (SELECT count(*) FROM scirag.document_citations c WHERE c.document_id = doc),
    'cited_by', (SELECT count(*) FROM scirag.document_citations c WHERE c.cited_document_id = doc),
    'communities', (SELECT count(*) FROM scirag.kg_communities k WHERE k.source_documents @> ARRAY[doc]))
$$;
COMMENT ON FUNCTION scirag.document_counts(bigint) IS
  'Rows of each layer a document owns: chunks, keyword postings, graph mentions and relationships, citations it makes and receives, communities built from it.';

CREATE FUNCTION scirag.document_delete(ref text)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  doc bigint := scirag.document_ref(ref, 'scirag.document_delete');
  ext text;
  counts jsonb;
  candidates bigint[];
BEGIN
  IF doc IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT d.external_id INTO ext FROM scirag.documents d WHERE d.id = doc FOR UPDATE;
  counts := scirag.document_counts(doc);
  candidates := scirag.document_entities(doc);
  -- citations of it by other documents stay, unresolved (the DOI is still what they cite)
  UPDATE scirag.document_citations SET cited_document_id = NULL WHERE cited_document_id = doc;
  DELETE FROM scirag.documents d WHERE d.id = doc;   -- cascades; drops its communities
  counts := counts || jsonb_build_object('entities', scirag.document_drop_orphans(candidates));
  RETURN jsonb_build_object('document_id', doc, 'external_id', ext, 'deleted', counts);
END $$;
COMMENT ON FUNCTION scirag.document_delete(text) IS
  'Deletes the document whose manifest id or numeric id is ref, and everything derived from it (chunks, postings, graph evidence, its communities, entities only it mentioned, its citations; citations of it become unresolved), in the caller''s transaction. Returns {document_id, external_id, deleted: {layer: rows}}, or NULL when no such document is visible. Loader only.';

CREATE FUNCTION scirag.document_clear(doc bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  counts jsonb;
  candidates bigint[];
BEGIN
  PERFORM 1 FROM scirag.documents d WHERE d.id = doc FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'scirag.document_clear: no document %', doc USING ERRCODE = '22023';
  END IF;
  counts := scirag.document_counts(doc);
  candidates := scirag.document_entities(doc);
  -- communities summarise text that is about to change
  DELETE FROM scirag.kg_communities k WHERE k.source_documents @> ARRAY[doc];
  -- chunk-less (Crossref) citations describe the work, not this parse of it: they stay
  DELETE FROM scirag.chunks c WHERE c.document_id = doc;
  counts := counts || jsonb_build_object('entities', scirag.document_drop_orphans(candidates));
  RETURN counts;
END $$;
COMMENT ON FUNCTION scirag.document_clear(bigint) IS
  'Before a re-parse or a replacement keeps a document''s id: deletes its chunks and everything derived from them (postings, graph evidence, communities built from it, entities only it mentioned); its row, its Crossref citations and citations of it stay. Returns the rows removed per layer. Loader only.';

CREATE FUNCTION scirag.document_set(ref text, changes jsonb)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  doc bigint := scirag.document_ref(ref, 'scirag.document_set');
  allowed constant text[] := ARRAY['title', 'authors', 'year', 'journal', 'doi', 'arxiv_id', 'license', 'source'];
  k text;
  v jsonb;
  d scirag.documents;
BEGIN
  IF changes IS NULL OR jsonb_typeof(changes) <> 'object' OR changes = '{}' THEN
    RAISE EXCEPTION 'scirag.document_set: changes must be a non-empty JSON object of %', array_to_string(allowed, ', ')
      USING ERRCODE = '22023';
  END IF;
  FOR k, v IN SELECT * FROM jsonb_each(changes) LOOP
    IF NOT k = ANY (allowed) THEN
      RAISE EXCEPTION 'scirag.document_set: % is not a field that can be set (one of %)', left(k, 64),
        array_to_string(allowed, ', ') USING ERRCODE = '22023';
    END IF;
    IF k = 'authors' THEN
      IF jsonb_typeof(v) <> 'array' OR jsonb_array_length(v) > 1000
         OR EXISTS (SELECT 1 FROM jsonb_array_elements(v) a
                    WHERE jsonb_typeof(a) <> 'string' OR length(a #>> '{}') NOT BETWEEN 1 AND 4096) THEN
        RAISE EXCEPTION 'scirag.document_set: authors must be a list of at most 1000 names (1-4096 characters each)'
          USING ERRCODE = '22023';
      END IF;
    ELSIF k = 'year' THEN
      IF jsonb_typeof(v) <> 'null' AND (jsonb_typeof(v) <> 'number' OR (v #>> '{}') !~ '^[0-9]{1,4}$') THEN
        RAISE EXCEPTION 'scirag.document_set: year must be a whole number from 0 to 9999 or null' USING ERRCODE = '22023';
      END IF;
    ELSIF k IN ('title', 'license', 'source') THEN
      IF jsonb_typeof(v) <> 'string' OR length(btrim(v #>> '{}')) NOT BETWEEN 1 AND 4096 THEN
        RAISE EXCEPTION 'scirag.document_set: % must be a non-empty string of at most 4096 characters', k
          USING ERRCODE = '22023';
      END IF;
    ELSIF jsonb_typeof(v) <> 'null' AND (jsonb_typeof(v) <> 'string' OR length(v #>> '{}') > 4096) THEN
      RAISE EXCEPTION 'scirag.document_set: % must be a string of at most 4096 characters or null', k
        USING ERRCODE = '22023';
    END IF;
  END LOOP;
  IF changes ? 'license' THEN
    BEGIN
      PERFORM (changes ->> 'license')::scirag.license_class;
    EXCEPTION WHEN check_violation THEN
      RAISE EXCEPTION 'scirag.document_set: license % is not one of public, open_commercial, open_noncommercial, restricted, unknown',
        left(changes ->> 'license', 64) USING ERRCODE = '22023';
    END;
  END IF;
  IF doc IS NULL THEN
    RETURN NULL;
  END IF;
  UPDATE scirag.documents x SET
    title = CASE WHEN changes ? 'title' THEN btrim(changes ->> 'title') ELSE x.title END,
    authors = CASE WHEN changes ? 'authors'
                   THEN ARRAY(SELECT btrim(a) FROM jsonb_array_elements_text(changes -> 'authors') a) ELSE x.authors END,
    year = CASE WHEN changes ? 'year' THEN (changes ->> 'year')::int ELSE x.year END,
    journal = CASE WHEN changes ? 'journal' THEN changes ->> 'journal' ELSE x.journal END,
    doi = CASE WHEN changes ? 'doi' THEN changes ->> 'doi' ELSE x.doi END,
    arxiv_id = CASE WHEN changes ? 'arxiv_id' THEN changes ->> 'arxiv_id' ELSE x.arxiv_id END,
    license = CASE WHEN changes ? 'license' THEN (changes ->> 'license')::scirag.license_class ELSE x.license END,
    source = CASE WHEN changes ? 'source' THEN btrim(changes ->> 'source') ELSE x.source END,
    -- a field set by hand is stated, no longer a guess read from the file
    metadata_inferred = ARRAY(SELECT f FROM unnest(x.metadata_inferred) f WHERE NOT changes ? f)
  WHERE x.id = doc
  RETURNING * INTO d;
  RETURN jsonb_build_object('document_id', d.id, 'external_id', d.external_id, 'title', d.title,
    'authors', to_jsonb(d.authors), 'year', d.year, 'journal', d.journal, 'doi', d.doi, 'arxiv_id', d.arxiv_id,
    'license', d.license::text, 'source', d.source, 'metadata_inferred', to_jsonb(d.metadata_inferred));
END $$;
COMMENT ON FUNCTION scirag.document_set(text, jsonb) IS
  'Corrects a document''s metadata: changes is a JSON object of title, authors (list), year, journal, doi, arxiv_id, license, source; a field set is no longer marked inferred; a new license or source re-files its chunks and graph evidence (triggers). Returns the document''s metadata after the change, or NULL when no such document is visible. Loader only.';

REVOKE ALL ON FUNCTION scirag.document_ref(text, text), scirag.document_drop_orphans(bigint[]),
  scirag.document_entities(bigint), scirag.document_counts(bigint), scirag.document_delete(text),
  scirag.document_clear(bigint), scirag.document_set(text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.document_ref(text, text), scirag.document_drop_orphans(bigint[]),
  scirag.document_entities(bigint), scirag.document_counts(bigint), scirag.document_delete(text),
  scirag.document_clear(bigint), scirag.document_set(text, jsonb) TO scirag_loader;
COMMIT;
