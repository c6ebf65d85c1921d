-- Deploy scirag:schema/graph
-- Knowledge graph and community layers (DESIGN.md sections 4, 5 and 12).
--
-- Evidence model: every row that comes from a chunk (an entity mention, a
-- relationship, a citation, a community's evidence chunk) carries the chunk's
-- document_id, license, source and retracted, filled from scirag.chunks by a
-- trigger, so row-level security filters it without a join and it stays
-- shardable by document_id. Entities themselves hold no evidence: an entity is
-- visible only through a visible mention (policies/graph_rls). Communities
-- aggregate many documents: each carries the set of its source documents and
-- their license / source / retraction sets, kept in step with documents by
-- triggers, so a summary is visible exactly when every source is in scope.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.kg_normalize(value text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  -- lower case, every run of non-alphanumerics becomes one space, and a plural
  -- "s" is dropped from words longer than three letters ("Emission Factors" and
  -- "emission factor" get one key). Python never re-implements this: keys are
  -- computed by the database (generated columns) on both the write and the read side.
  SELECT coalesce(string_agg(CASE WHEN length(w) > 3 AND w ~ '[^s]s$' THEN left(w, -1) ELSE w END, ' ' ORDER BY i), '')
  FROM unnest(regexp_split_to_array(btrim(regexp_replace(lower(coalesce(value, '')), '[^a-z0-9]+', ' ', 'g')), ' '))
       WITH ORDINALITY AS x(w, i)
  WHERE w <> ''
$$;
COMMENT ON FUNCTION scirag.kg_normalize(text) IS
  'Match key of an entity name or surface form: lower case, alphanumeric words, plural s dropped. The question matcher and every stored key use it.';

-- ---------------------------------------------------------------------------
-- Options (domain.yaml "graph:", synced by scirag graph extract)
-- ---------------------------------------------------------------------------
CREATE TABLE scirag.kg_options (
  key         text PRIMARY KEY,
  value       text NOT NULL,
  description text NOT NULL
);
ALTER TABLE scirag.kg_options OWNER TO scirag_owner;
COMMENT ON TABLE scirag.kg_options IS
  'Knobs of the graph and community layers (ranking, bounds, citation hop). Written from domain.yaml by the loader; a session may override a ranking knob with SET scirag.graph_<key>, never a scope rule, and bounds are clamped.';
COMMENT ON COLUMN scirag.kg_options.key IS 'option name';
COMMENT ON COLUMN scirag.kg_options.value IS 'option value as text ('''' = unset)';
COMMENT ON COLUMN scirag.kg_options.description IS 'what the option does';
INSERT INTO scirag.kg_options (key, value, description) VALUES
  ('rank_by', 'hops', 'graph candidates ordered by hop distance (hops) or by the strongest minimum-edge confidence along the path (confidence)'),
  ('min_confidence', '', 'edges below this confidence are not walked ('''' = no minimum; 0.4, 0.7 or 1.0)'),
  ('citation_hop', 'off', 'on: the graph layer also brings chunks of documents one resolved citation away from the represented documents'),
  ('question_entities', 'offline', 'offline: entities are found in the question by the SQL surface matcher; model: a model names them too (scirag.graph_question_entities)'),
  ('max_seeds', '10', 'most entities found in a question that seed the walk'),
  ('max_fanout', '20', 'most neighbours followed from one entity per hop (the hub bound)'),
  ('max_entities', '400', 'most entities a walk may reach'),
  ('mentions_per_entity', '40', 'most evidence chunks one reached entity contributes'),
  ('community_top', '3', 'communities whose evidence chunks search_community_chunks returns');

-- ---------------------------------------------------------------------------
-- Entities (canonical by name; tombstones point at their survivor)
-- ---------------------------------------------------------------------------
CREATE TABLE scirag.kg_entities (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name                text NOT NULL CHECK (btrim(name) <> ''),
  name_key            text GENERATED ALWAYS AS (scirag.kg_normalize(name)) STORED,
  entity_type         text NOT NULL,
  aliases             text[] NOT NULL DEFAULT '{}',
  declared            boolean NOT NULL DEFAULT false,
  canonical_entity_id bigint REFERENCES scirag.kg_entities (id),
  extractor           text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  merged_at           timestamptz,
  UNIQUE (name_key, entity_type),
  CHECK (canonical_entity_id IS DISTINCT FROM id),
  CHECK ((canonical_entity_id IS NULL) = (merged_at IS NULL))
);
ALTER TABLE scirag.kg_entities OWNER TO scirag_owner;
CREATE INDEX kg_entities_canonical ON scirag.kg_entities (canonical_entity_id) WHERE canonical_entity_id IS NOT NULL;
COMMENT ON TABLE scirag.kg_entities IS
  'Knowledge-graph entities, canonical by (normalised name, ontology type). Holds no evidence itself: its mentions do. A merged entity stays as a tombstone whose canonical_entity_id names the survivor.';
COMMENT ON COLUMN scirag.kg_entities.id IS 'entity id';
COMMENT ON COLUMN scirag.kg_entities.name IS 'canonical name (a declared domain name, or the surface the extractor first saw)';
COMMENT ON COLUMN scirag.kg_entities.name_key IS 'kg_normalize(name): the canonical key';
COMMENT ON COLUMN scirag.kg_entities.entity_type IS 'entity type from the domain ontology';
COMMENT ON COLUMN scirag.kg_entities.aliases IS 'surface forms actually found in the source. Not readable by scirag_reader: an alias seen only in restricted text would leak it; readers use the scoped surfaces in kg_mentions';
COMMENT ON COLUMN scirag.kg_entities.declared IS 'true when the name is declared in domain.yaml (which is public by construction)';
COMMENT ON COLUMN scirag.kg_entities.canonical_entity_id IS 'NULL for an active entity; for a tombstone, the entity it was merged into';
COMMENT ON COLUMN scirag.kg_entities.extractor IS 'what created the entity (ontology, a model name, resolution)';
COMMENT ON COLUMN scirag.kg_entities.created_at IS 'when the entity was first extracted';
COMMENT ON COLUMN scirag.kg_entities.merged_at IS 'when the entity was merged into its survivor (NULL while active)';

-- ---------------------------------------------------------------------------
-- Evidence: mentions and relationships per chunk
-- ---------------------------------------------------------------------------
CREATE TABLE scirag.kg_mentions (
  entity_id          bigint NOT NULL REFERENCES scirag.kg_entities (id) ON DELETE CASCADE,
  chunk_id           bigint NOT NULL REFERENCES scirag.chunks (id) ON DELETE CASCADE,
  surface            text NOT NULL CHECK (btrim(surface) <> ''),
  surface_key        text GENERATED ALWAYS AS (scirag.kg_normalize(surface)) STORED,
  acronym            boolean GENERATED ALWAYS AS (surface ~ '[A-Z]' AND surface !~ '[a-z]') STORED,
  occurrences        int NOT NULL DEFAULT 1 CHECK (occurrences > 0),
  heading            boolean NOT NULL DEFAULT false,
  original_entity_id bigint NOT NULL REFERENCES scirag.kg_entities (id) ON DELETE CASCADE,
  document_id        bigint NOT NULL,
  license            scirag.license_class NOT NULL,
  source             text NOT NULL,
  retracted          boolean NOT NULL DEFAULT false,
  PRIMARY KEY (entity_id, chunk_id, surface_key)
);
ALTER TABLE scirag.kg_mentions OWNER TO scirag_owner;
CREATE INDEX kg_mentions_surface ON scirag.kg_mentions (surface_key, entity_id);
CREATE INDEX kg_mentions_surface_word ON scirag.kg_mentions (surface_key, entity_id) WHERE NOT acronym;
CREATE INDEX kg_mentions_entity_rank ON scirag.kg_mentions (entity_id, heading DESC, occurrences DESC, chunk_id);
CREATE INDEX kg_mentions_chunk ON scirag.kg_mentions (chunk_id);
CREATE INDEX kg_mentions_original ON scirag.kg_mentions (original_entity_id);
CREATE INDEX kg_mentions_document ON scirag.kg_mentions (document_id);
COMMENT ON TABLE scirag.kg_mentions IS
  'Evidence pointers: entity E is mentioned in chunk C as the literal surface S. Per-surface provenance: a question may seed the walk from S only through a mention the caller may see.';
COMMENT ON COLUMN scirag.kg_mentions.entity_id IS 'the active (canonical) entity; repointed by an applied merge';
COMMENT ON COLUMN scirag.kg_mentions.chunk_id IS 'evidence chunk';
COMMENT ON COLUMN scirag.kg_mentions.surface IS 'the surface form exactly as written in the chunk';
COMMENT ON COLUMN scirag.kg_mentions.surface_key IS 'kg_normalize(surface): what the question matcher looks up';
COMMENT ON COLUMN scirag.kg_mentions.acronym IS 'true for an all-capitals surface (VS, HI, PM2.5): it seeds only when the question writes it in capitals';
COMMENT ON COLUMN scirag.kg_mentions.occurrences IS 'times the surface occurs in the chunk';
COMMENT ON COLUMN scirag.kg_mentions.heading IS 'the surface occurs in the chunk''s title or section path: the chunk is about the entity';
COMMENT ON COLUMN scirag.kg_mentions.original_entity_id IS 'the entity the extractor attached the mention to (a tombstone keeps its evidence pointers through it)';
COMMENT ON COLUMN scirag.kg_mentions.document_id IS 'document of the chunk (scope and sharding key), filled from chunks';
COMMENT ON COLUMN scirag.kg_mentions.license IS 'license class of the document (scope), filled from chunks';
COMMENT ON COLUMN scirag.kg_mentions.source IS 'source of the document (scope), filled from chunks';
COMMENT ON COLUMN scirag.kg_mentions.retracted IS 'retraction status of the document (scope), filled from chunks';

CREATE TABLE scirag.kg_relationships (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source_entity_id bigint NOT NULL REFERENCES scirag.kg_entities (id) ON DELETE CASCADE,
  target_entity_id bigint NOT NULL REFERENCES scirag.kg_entities (id) ON DELETE CASCADE,
  rel_type         text NOT NULL,
  phrase           text NOT NULL CHECK (btrim(phrase) <> ''),
  phrase_tsv       tsvector GENERATED ALWAYS AS (to_tsvector('english', phrase)) STORED,
  confidence       double precision NOT NULL CHECK (confidence IN (1.0, 0.7, 0.4)),
  extractor        text NOT NULL,
  extracted_at     timestamptz NOT NULL DEFAULT now(),
  chunk_id         bigint NOT NULL REFERENCES scirag.chunks (id) ON DELETE CASCADE,
  document_id      bigint NOT NULL,
  license          scirag.license_class NOT NULL,
  source           text NOT NULL,
  retracted        boolean NOT NULL DEFAULT false,
  UNIQUE (rel_type, source_entity_id, target_entity_id, chunk_id),
  CHECK (source_entity_id <> target_entity_id)
);
ALTER TABLE scirag.kg_relationships OWNER TO scirag_owner;
-- The walk reads a bounded number of edges per entity in confidence order from
-- these two indexes, so a hub entity costs no more than any other.
CREATE INDEX kg_relationships_out ON scirag.kg_relationships (source_entity_id, confidence DESC, target_entity_id, chunk_id);
CREATE INDEX kg_relationships_in ON scirag.kg_relationships (target_entity_id, confidence DESC, source_entity_id, chunk_id);
CREATE INDEX kg_relationships_chunk ON scirag.kg_relationships (chunk_id);
CREATE INDEX kg_relationships_document ON scirag.kg_relationships (document_id);
COMMENT ON TABLE scirag.kg_relationships IS
  'Directed typed edges, one row per evidence chunk, with the quoted phrase that states them and a calibrated confidence (1.0 direct statement, 0.7 strong implication, 0.4 inference across sentences). Re-extraction keeps the greatest confidence per (type, source, target, chunk); other provenance stays a separate row so scope can never erase eligible evidence.';
COMMENT ON COLUMN scirag.kg_relationships.id IS 'relationship id';
COMMENT ON COLUMN scirag.kg_relationships.source_entity_id IS 'source entity (of the relation type''s source type)';
COMMENT ON COLUMN scirag.kg_relationships.target_entity_id IS 'target entity (of the relation type''s target type)';
COMMENT ON COLUMN scirag.kg_relationships.rel_type IS 'relation type from the domain ontology';
COMMENT ON COLUMN scirag.kg_relationships.phrase IS 'the quoted text of the chunk that states the relationship';
COMMENT ON COLUMN scirag.kg_relationships.phrase_tsv IS 'English lexemes of the phrase: the walk prefers edges whose statement shares words with the question';
COMMENT ON COLUMN scirag.kg_relationships.confidence IS '1.0 direct statement, 0.7 strong implication, 0.4 inference across sentences';
COMMENT ON COLUMN scirag.kg_relationships.extractor IS 'ontology (offline cue patterns) or the model that extracted it';
COMMENT ON COLUMN scirag.kg_relationships.extracted_at IS 'when it was (last) extracted';
COMMENT ON COLUMN scirag.kg_relationships.chunk_id IS 'evidence chunk';
COMMENT ON COLUMN scirag.kg_relationships.document_id IS 'document of the chunk (scope and sharding key), filled from chunks';
COMMENT ON COLUMN scirag.kg_relationships.license IS 'license class of the document (scope), filled from chunks';
COMMENT ON COLUMN scirag.kg_relationships.source IS 'source of the document (scope), filled from chunks';
COMMENT ON COLUMN scirag.kg_relationships.retracted IS 'retraction status of the document (scope), filled from chunks';

-- ---------------------------------------------------------------------------
-- Citations between documents (kept apart from ontology relationships)
-- ---------------------------------------------------------------------------
CREATE TABLE scirag.document_citations (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  document_id       bigint NOT NULL,
  chunk_id          bigint NOT NULL REFERENCES scirag.chunks (id) ON DELETE CASCADE,
  cited_doi         text NOT NULL CHECK (cited_doi = lower(cited_doi)),
  cited_document_id bigint,
  license           scirag.license_class NOT NULL,
  source            text NOT NULL,
  retracted         boolean NOT NULL DEFAULT false,
  found_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (document_id, cited_doi)
);
ALTER TABLE scirag.document_citations OWNER TO scirag_owner;
CREATE INDEX document_citations_cited ON scirag.document_citations (cited_document_id) WHERE cited_document_id IS NOT NULL;
CREATE INDEX document_citations_doi ON scirag.document_citations (cited_doi);
COMMENT ON TABLE scirag.document_citations IS
  'DOI references from one document to another, resolved when the cited DOI is a corpus document. No foreign key to the cited document: it may live on another shard, and an unresolved DOI stays visible provenance that never enters retrieval.';
COMMENT ON COLUMN scirag.document_citations.id IS 'citation id';
COMMENT ON COLUMN scirag.document_citations.document_id IS 'the citing document (scope and sharding key), filled from chunks';
COMMENT ON COLUMN scirag.document_citations.chunk_id IS 'chunk in which the reference was found';
COMMENT ON COLUMN scirag.document_citations.cited_doi IS 'cited DOI, lower case, without a resolver prefix';
COMMENT ON COLUMN scirag.document_citations.cited_document_id IS 'corpus document with that DOI (NULL while unresolved)';
COMMENT ON COLUMN scirag.document_citations.license IS 'license class of the citing document (scope), filled from chunks';
COMMENT ON COLUMN scirag.document_citations.source IS 'source of the citing document (scope), filled from chunks';
COMMENT ON COLUMN scirag.document_citations.retracted IS 'retraction status of the citing document (scope), filled from chunks';
COMMENT ON COLUMN scirag.document_citations.found_at IS 'when the reference was extracted';

-- ---------------------------------------------------------------------------
-- Entity resolution audit (durable record of every applied merge)
-- ---------------------------------------------------------------------------
CREATE TABLE scirag.entity_resolution_audit (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id              text NOT NULL,
  applied_at          timestamptz NOT NULL DEFAULT now(),
  tier                int NOT NULL CHECK (tier IN (1, 2, 3)),
  method              text NOT NULL,
  survivor_entity_id  bigint NOT NULL REFERENCES scirag.kg_entities (id),
  merged_entity_id    bigint NOT NULL REFERENCES scirag.kg_entities (id),
  survivor_name       text NOT NULL,
  merged_name         text NOT NULL,
  entity_type         text NOT NULL,
  similarity          double precision,
  decided_by          text NOT NULL,
  reason              text NOT NULL,
  mentions_moved      int NOT NULL DEFAULT 0,
  relationships_moved int NOT NULL DEFAULT 0,
  applied_by          name NOT NULL DEFAULT session_user
);
ALTER TABLE scirag.entity_resolution_audit OWNER TO scirag_owner;
COMMENT ON TABLE scirag.entity_resolution_audit IS
  'One row per applied entity merge (scirag graph resolve-entities --apply). Names may come from restricted text: loader and admin only.';
COMMENT ON COLUMN scirag.entity_resolution_audit.id IS 'audit row id';
COMMENT ON COLUMN scirag.entity_resolution_audit.run_id IS 'the resolve-entities run that applied the merge';
COMMENT ON COLUMN scirag.entity_resolution_audit.applied_at IS 'when the merge was applied';
COMMENT ON COLUMN scirag.entity_resolution_audit.tier IS '1 normalised name / alias overlap, 2 high-similarity same-type names, 3 model decision in the ambiguous band';
COMMENT ON COLUMN scirag.entity_resolution_audit.method IS 'rule that proposed the merge';
COMMENT ON COLUMN scirag.entity_resolution_audit.survivor_entity_id IS 'entity kept';
COMMENT ON COLUMN scirag.entity_resolution_audit.merged_entity_id IS 'entity turned into a tombstone';
COMMENT ON COLUMN scirag.entity_resolution_audit.survivor_name IS 'survivor name at merge time';
COMMENT ON COLUMN scirag.entity_resolution_audit.merged_name IS 'merged entity name at merge time';
COMMENT ON COLUMN scirag.entity_resolution_audit.entity_type IS 'type of both entities';
COMMENT ON COLUMN scirag.entity_resolution_audit.similarity IS 'name similarity (0..1) that placed the pair in its tier';
COMMENT ON COLUMN scirag.entity_resolution_audit.decided_by IS 'rule, or the model that decided an ambiguous pair';
COMMENT ON COLUMN scirag.entity_resolution_audit.reason IS 'why the pair was merged';
COMMENT ON COLUMN scirag.entity_resolution_audit.mentions_moved IS 'evidence pointers repointed to the survivor';
COMMENT ON COLUMN scirag.entity_resolution_audit.relationships_moved IS 'relationships repointed to the survivor';
COMMENT ON COLUMN scirag.entity_resolution_audit.applied_by IS 'login that applied the merge';

-- ---------------------------------------------------------------------------
-- Communities
-- ---------------------------------------------------------------------------
CREATE TABLE scirag.kg_communities (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tier             int NOT NULL,
  tier_licenses    text[] NOT NULL,
  label            bigint NOT NULL,
  title            text NOT NULL,
  summary          text NOT NULL,
  summary_method   text NOT NULL,
  embedding        vector(:dim),
  embedding_version text,
  entity_count     int NOT NULL,
  relationship_count int NOT NULL,
  source_documents bigint[] NOT NULL CHECK (cardinality(source_documents) > 0),
  licenses         text[] NOT NULL,
  sources          text[] NOT NULL,
  any_retracted    boolean NOT NULL,
  built_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tier, label),
  CHECK (embedding IS NULL OR embedding_version IS NOT NULL)
);
ALTER TABLE scirag.kg_communities OWNER TO scirag_owner;
-- No HNSW index: a corpus has hundreds to thousands of communities, and an exact
-- scan after the row-level-security filter always returns every visible one.
CREATE INDEX kg_communities_documents ON scirag.kg_communities USING gin (source_documents);
COMMENT ON TABLE scirag.kg_communities IS
  'Communities of tightly connected entities (deterministic label propagation) with a summary and its embedding. Built per license tier from that tier''s evidence only; visible exactly when every source document is in the caller''s scope.';
COMMENT ON COLUMN scirag.kg_communities.id IS 'community id';
COMMENT ON COLUMN scirag.kg_communities.tier IS 'license tier the community was built in (higher = more license classes)';
COMMENT ON COLUMN scirag.kg_communities.tier_licenses IS 'license classes whose evidence the tier''s graph was built from';
COMMENT ON COLUMN scirag.kg_communities.label IS 'label-propagation label (an entity id), stable across rebuilds of the same graph';
COMMENT ON COLUMN scirag.kg_communities.title IS 'names of the most connected member entities';
COMMENT ON COLUMN scirag.kg_communities.summary IS 'model or extractive summary of the community''s evidence';
COMMENT ON COLUMN scirag.kg_communities.summary_method IS 'extractive, or the model that wrote the summary';
COMMENT ON COLUMN scirag.kg_communities.embedding IS 'unit-length embedding of the summary';
COMMENT ON COLUMN scirag.kg_communities.embedding_version IS 'embedder identity';
COMMENT ON COLUMN scirag.kg_communities.entity_count IS 'member entities';
COMMENT ON COLUMN scirag.kg_communities.relationship_count IS 'evidence relationships between members';
COMMENT ON COLUMN scirag.kg_communities.source_documents IS 'every document whose evidence the community and its summary were built from';
COMMENT ON COLUMN scirag.kg_communities.licenses IS 'license classes of the source documents (kept in step by trigger)';
COMMENT ON COLUMN scirag.kg_communities.sources IS 'sources of the source documents (kept in step by trigger)';
COMMENT ON COLUMN scirag.kg_communities.any_retracted IS 'true when any source document is retracted (kept in step by trigger)';
COMMENT ON COLUMN scirag.kg_communities.built_at IS 'when scirag graph communities built it';

CREATE TABLE scirag.kg_community_members (
  community_id bigint NOT NULL REFERENCES scirag.kg_communities (id) ON DELETE CASCADE,
  entity_id    bigint NOT NULL REFERENCES scirag.kg_entities (id) ON DELETE CASCADE,
  degree       double precision NOT NULL,
  PRIMARY KEY (community_id, entity_id)
);
ALTER TABLE scirag.kg_community_members OWNER TO scirag_owner;
COMMENT ON TABLE scirag.kg_community_members IS 'Member entities of each community (visible with the community)';
COMMENT ON COLUMN scirag.kg_community_members.community_id IS 'community';
COMMENT ON COLUMN scirag.kg_community_members.entity_id IS 'member entity';
COMMENT ON COLUMN scirag.kg_community_members.degree IS 'summed confidence of the member''s edges inside the community';

CREATE TABLE scirag.kg_community_chunks (
  community_id bigint NOT NULL REFERENCES scirag.kg_communities (id) ON DELETE CASCADE,
  chunk_id     bigint NOT NULL REFERENCES scirag.chunks (id) ON DELETE CASCADE,
  weight       double precision NOT NULL,
  document_id  bigint NOT NULL,
  license      scirag.license_class NOT NULL,
  source       text NOT NULL,
  retracted    boolean NOT NULL DEFAULT false,
  PRIMARY KEY (community_id, chunk_id)
);
ALTER TABLE scirag.kg_community_chunks OWNER TO scirag_owner;
CREATE INDEX kg_community_chunks_chunk ON scirag.kg_community_chunks (chunk_id);
COMMENT ON TABLE scirag.kg_community_chunks IS 'Evidence chunks of each community (the chunks stating relationships between its members)';
COMMENT ON COLUMN scirag.kg_community_chunks.community_id IS 'community';
COMMENT ON COLUMN scirag.kg_community_chunks.chunk_id IS 'evidence chunk';
COMMENT ON COLUMN scirag.kg_community_chunks.weight IS 'summed confidence of the community relationships the chunk states';
COMMENT ON COLUMN scirag.kg_community_chunks.document_id IS 'document of the chunk (scope and sharding key), filled from chunks';
COMMENT ON COLUMN scirag.kg_community_chunks.license IS 'license class of the document (scope), filled from chunks';
COMMENT ON COLUMN scirag.kg_community_chunks.source IS 'source of the document (scope), filled from chunks';
COMMENT ON COLUMN scirag.kg_community_chunks.retracted IS 'retraction status of the document (scope), filled from chunks';

-- ---------------------------------------------------------------------------
-- Triggers keeping the copies of scope columns right
-- ---------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION scirag.kg_fill_scope()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  c record;
BEGIN
  -- The scope columns are always the chunk's, whatever the writer passed: a row
  -- cannot be filed under a wider license than its evidence.
  SELECT ch.document_id, ch.license, ch.source, ch.retracted INTO c
  FROM scirag.chunks ch WHERE ch.id = NEW.chunk_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'scirag: chunk % does not exist or is not visible to %', NEW.chunk_id, current_user;
  END IF;
  NEW.document_id := c.document_id;
  NEW.license := c.license;
  NEW.source := c.source;
  NEW.retracted := c.retracted;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION scirag.kg_fill_scope() IS
  'Row trigger: copies document_id, license, source and retracted from the evidence chunk into a graph evidence row.';

CREATE TRIGGER kg_mentions_fill_scope BEFORE INSERT OR UPDATE OF chunk_id
  ON scirag.kg_mentions FOR EACH ROW EXECUTE FUNCTION scirag.kg_fill_scope();
CREATE TRIGGER kg_relationships_fill_scope BEFORE INSERT OR UPDATE OF chunk_id
  ON scirag.kg_relationships FOR EACH ROW EXECUTE FUNCTION scirag.kg_fill_scope();
CREATE TRIGGER document_citations_fill_scope BEFORE INSERT OR UPDATE OF chunk_id
  ON scirag.document_citations FOR EACH ROW EXECUTE FUNCTION scirag.kg_fill_scope();
CREATE TRIGGER kg_community_chunks_fill_scope BEFORE INSERT OR UPDATE OF chunk_id
  ON scirag.kg_community_chunks FOR EACH ROW EXECUTE FUNCTION scirag.kg_fill_scope();

CREATE OR REPLACE FUNCTION scirag.kg_sync_document_scope()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- A license, source or retraction change re-files the document's graph
  -- evidence and the communities built from it (chunks follow via corpus_maintenance).
  UPDATE scirag.kg_mentions SET license = NEW.license, source = NEW.source, retracted = NEW.retracted
    WHERE document_id = NEW.id;
  UPDATE scirag.kg_relationships SET license = NEW.license, source = NEW.source, retracted = NEW.retracted
    WHERE document_id = NEW.id;
  UPDATE scirag.document_citations SET license = NEW.license, source = NEW.source, retracted = NEW.retracted
    WHERE document_id = NEW.id;
  UPDATE scirag.kg_community_chunks SET license = NEW.license, source = NEW.source, retracted = NEW.retracted
    WHERE document_id = NEW.id;
  UPDATE scirag.kg_communities k
  SET licenses = s.licenses, sources = s.sources, any_retracted = s.any_retracted
  FROM (SELECT k2.id,
               array_agg(DISTINCT d.license::text ORDER BY d.license::text) AS licenses,
               array_agg(DISTINCT d.source ORDER BY d.source) AS sources,
               bool_or(d.retracted) AS any_retracted
        FROM scirag.kg_communities k2
        JOIN scirag.documents d ON d.id = ANY (k2.source_documents)
        WHERE k2.source_documents @> ARRAY[NEW.id]
        GROUP BY k2.id) s
  WHERE k.id = s.id;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kg_sync_document_scope() IS
  'Row trigger: copies a document''s new scope columns to its graph evidence and refreshes the communities built from it.';

CREATE OR REPLACE FUNCTION scirag.kg_drop_document_communities()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- A summary built partly from a deleted document must not outlive it (fail closed).
  DELETE FROM scirag.kg_communities k
  WHERE k.source_documents && ARRAY(SELECT g.id FROM gone_documents g);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kg_drop_document_communities() IS
  'Statement trigger: deletes the communities built from deleted documents.';

-- kg_sync_document_scope copies from NEW, not from chunks: it may fire before
-- corpus_maintenance's documents_sync_scope has updated the chunks.
CREATE TRIGGER documents_sync_graph_scope AFTER UPDATE OF license, source, retracted ON scirag.documents
  FOR EACH ROW WHEN ((OLD.license, OLD.source, OLD.retracted) IS DISTINCT FROM (NEW.license, NEW.source, NEW.retracted))
  EXECUTE FUNCTION scirag.kg_sync_document_scope();
CREATE TRIGGER documents_drop_graph_communities AFTER DELETE ON scirag.documents
  REFERENCING OLD TABLE AS gone_documents FOR EACH STATEMENT EXECUTE FUNCTION scirag.kg_drop_document_communities();

-- Fail closed until policies/graph_rls writes the policies: forced RLS with no
-- policy shows nothing to anyone but the superuser.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['kg_options', 'kg_entities', 'kg_mentions', 'kg_relationships', 'document_citations',
                           'entity_resolution_audit', 'kg_communities', 'kg_community_members', 'kg_community_chunks'] LOOP
    EXECUTE format('ALTER TABLE scirag.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE scirag.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('REVOKE ALL ON scirag.%I FROM PUBLIC', t);
  END LOOP;
END $$;
-- ALTER DEFAULT PRIVILEGES ... IN SCHEMA cannot take back PUBLIC's global EXECUTE: revoke explicitly.
REVOKE EXECUTE ON FUNCTION scirag.kg_normalize(text), scirag.kg_fill_scope(),
  scirag.kg_sync_document_scope(), scirag.kg_drop_document_communities() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.kg_normalize(text) TO scirag_reader, scirag_loader;
COMMIT;
