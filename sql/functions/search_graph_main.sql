-- Deploy scirag:functions/search_graph_main
-- Split (issue 28): scirag.search_graph, moved out of functions/search_graph (sql/functions/search_graph.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/search_graph_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.search_graph(query text, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, hops int, confidence double precision)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- planned at ~1e7 even on an empty graph: a stock server (jit = on) would JIT-compile
-- its statements for hundreds of ms that the work never repays
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  rank_by text := lower(coalesce(scirag.graph_option('rank_by'), 'hops'));
  min_conf double precision := 0;
  cite_hop boolean := lower(coalesce(scirag.graph_option('citation_hop'), 'off')) IN ('on', 'true', '1', 'yes');
  max_seeds int := scirag.graph_option_int('max_seeds', 10, 1, 50);
  fanout int := scirag.graph_option_int('max_fanout', 20, 1, 100);
  max_entities int := scirag.graph_option_int('max_entities', 400, 1, 5000);
  per_entity int := scirag.graph_option_int('mentions_per_entity', 40, 1, 500);
  edge_reads int;
  extra text[] := '{}';
  seeds bigint[];
  qlex text[];
  raw text;
BEGIN
  -- bounds first: the question reaches the surface matcher, to_tsvector and (with
  -- question_entities = model) Python; n sizes the ranking
  PERFORM scirag.check_question(query, 'scirag.search_graph');
  PERFORM scirag.check_limit(n, 'n', 'scirag.search_graph');
  IF coalesce(n, 0) <= 0 OR coalesce(btrim(query), '') = '' OR scirag.scope_is_empty() THEN
    RETURN;  -- fail closed: an empty scope calls no model and reads no graph
  END IF;
  raw := scirag.graph_option('min_confidence');
  IF raw ~ '^\s*[0-9]*\.?[0-9]+\s*$' THEN
    min_conf := raw::double precision;
  END IF;
  -- Several edges often join the same two entities (one per evidence chunk):
  -- read a bounded multiple of the fan-out, then keep distinct neighbours.
  edge_reads := fanout * 8;
  IF lower(coalesce(scirag.graph_option('question_entities'), 'offline')) = 'model' THEN
    BEGIN
      extra := coalesce(scirag.graph_question_entities(query), '{}');
    EXCEPTION WHEN OTHERS THEN
      extra := '{}';  -- the model is optional: the offline matcher still seeds
    END;
  END IF;
  seeds := ARRAY(SELECT s.entity_id FROM scirag.graph_seed_entities(query, extra) s LIMIT max_seeds);
  IF cardinality(seeds) = 0 THEN
    RETURN;
  END IF;

  -- the question's English lexemes: among equally near and equally confident
  -- paths, the walk prefers edges whose quoted statement shares words with it
  qlex := ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', query)) AS u);

  RETURN QUERY
  WITH RECURSIVE walk(entity_id, hop, conf, rel, path, via_chunk) AS (
    SELECT s, 0, 1.0::double precision, 0, ARRAY[s], NULL::bigint FROM unnest(seeds) AS s
    UNION ALL
    -- Two hops, either direction. Each step reads at most edge_reads edges per
    -- direction in confidence order from an index and keeps fanout neighbours:
    -- a hub entity with a million edges costs what any other entity costs.
    -- Edges are read under row-level security: an edge whose evidence the
    -- caller may not see neither extends the walk nor is counted.
    SELECT nb.other, w.hop + 1, least(w.conf, nb.confidence), w.rel + nb.rel, w.path || nb.other, nb.chunk_id
    FROM walk w
    CROSS JOIN LATERAL (
      SELECT d.other, d.confidence, d.rel, d.chunk_id
      FROM (SELECT DISTINCT ON (e.other) e.other, e.confidence, e.rel, e.chunk_id
            FROM ((SELECT r.target_entity_id AS other, r.confidence, r.chunk_id,
                          cardinality(ARRAY(SELECT unnest(tsvector_to_array(r.phrase_tsv))
                                            INTERSECT SELECT unnest(qlex))) AS rel
                   FROM scirag.kg_relationships r
                   WHERE r.source_entity_id = w.entity_id AND r.confidence >= min_conf
                   ORDER BY r.confidence DESC, r.target_entity_id, r.chunk_id
                   LIMIT edge_reads)
                  UNION ALL
                  (SELECT r.source_entity_id, r.confidence, r.chunk_id,
                          cardinality(ARRAY(SELECT unnest(tsvector_to_array(r.phrase_tsv))
                                            INTERSECT SELECT unnest(qlex)))
                   FROM scirag.kg_relationships r
                   WHERE r.target_entity_id = w.entity_id AND r.confidence >= min_conf
                   ORDER BY r.confidence DESC, r.source_entity_id, r.chunk_id
                   LIMIT edge_reads)) e
            WHERE e.other <> ALL (w.path)
            ORDER BY e.other, e.confidence DESC, e.rel DESC, e.chunk_id) d
      ORDER BY d.confidence DESC, d.rel DESC, d.other
      LIMIT fanout) nb
    WHERE w.hop < 2),
  ents AS (
    -- one row per reached entity: its hop distance, the best path at that
    -- distance (confidence, then words shared with the question) and the best
    -- confidence over all paths; at most max_entities of them
    SELECT x.entity_id, x.hop, x.conf AS conf_at_hop, x.rel AS rel_at_hop, x.best_conf
    FROM (SELECT DISTINCT ON (w.entity_id) w.entity_id, w.hop, w.conf, w.rel,
                 max(w.conf) OVER (PARTITION BY w.entity_id) AS best_conf
          FROM walk w
          ORDER BY w.entity_id, w.hop, w.conf DESC, w.rel DESC) x
    ORDER BY x.hop, x.conf DESC, x.rel DESC, x.entity_id
    LIMIT max_entities),
  cand AS (
    -- the chunks that mention a reached entity (its evidence pointers; chunks
    -- whose title or section path names it first) ...
    SELECT mm.chunk_id, e.entity_id, e.hop, e.conf_at_hop AS conf, e.rel_at_hop AS rel, mm.heading AS focus,
           e.best_conf,
           -- relationships of the entity this chunk states. Read through the chunk
           -- index (a chunk states few edges): "+ 0" keeps the planner off the
           -- entity indexes, which for a hub hold a million rows
           (SELECT count(*) FROM scirag.kg_relationships r
            WHERE r.chunk_id = mm.chunk_id
              AND (r.source_entity_id + 0 = e.entity_id OR r.target_entity_id + 0 = e.entity_id)) AS ev
    FROM ents e
    CROSS JOIN LATERAL (SELECT m.chunk_id, m.heading FROM scirag.kg_mentions m
                        WHERE m.entity_id = e.entity_id
                        ORDER BY m.heading DESC, m.occurrences DESC, m.chunk_id
                        LIMIT per_entity) mm
    UNION ALL
    -- ... and the chunks that state the edges the walk followed
    SELECT w.via_chunk, w.entity_id, w.hop, w.conf, w.rel, true, w.conf, 1::bigint
    FROM walk w JOIN ents e ON e.entity_id = w.entity_id
    WHERE w.via_chunk IS NOT NULL),
  per_chunk AS (
    SELECT c.chunk_id, min(c.hop) AS hop,
           max(c.conf) FILTER (WHERE c.hop = c.min_hop) AS conf_at_hop,
           max(c.rel) FILTER (WHERE c.hop = c.min_hop) AS rel,
           bool_or(c.focus) FILTER (WHERE c.hop = c.min_hop) AS focus,
           sum(c.ev) FILTER (WHERE c.hop = c.min_hop) AS ev,
           max(c.best_conf) AS best_conf,
           count(DISTINCT c.entity_id) AS support
    FROM (SELECT cand.*, min(cand.hop) OVER (PARTITION BY cand.chunk_id) AS min_hop FROM cand) c
    GROUP BY c.chunk_id),
  visible AS (
    -- the final join with chunks applies the chunk policy once more
    SELECT p.chunk_id, p.hop, p.conf_at_hop, p.best_conf, p.rel, p.focus, p.ev, p.support, ch.document_id
    FROM per_chunk p JOIN scirag.chunks ch ON ch.id = p.chunk_id
    WHERE ch.kind <> 'section'),
  cited AS (
    -- optional single citation hop: documents one resolved citation away (either
    -- direction) from a represented document. Citations and the neighbour's
    -- chunks are both read under row-level security, so scope applies to the
    -- neighbouring document before anything is ranked.
    SELECT ch.id AS chunk_id, nd.hop, nd.conf, nd.conf AS best_conf, 0 AS rel, false AS focus, 0::numeric AS ev,
           0::bigint AS support
    FROM (SELECT x.document_id, min(x.hop) + 1 AS hop, max(x.conf) AS conf
          FROM (SELECT dc.cited_document_id AS document_id, v.hop, v.conf_at_hop AS conf
                FROM visible v JOIN scirag.document_citations dc ON dc.document_id = v.document_id
                WHERE dc.cited_document_id IS NOT NULL
                UNION ALL
                SELECT dc.document_id, v.hop, v.conf_at_hop
                FROM visible v JOIN scirag.document_citations dc ON dc.cited_document_id = v.document_id) x
          WHERE cite_hop
          GROUP BY x.document_id) nd
    CROSS JOIN LATERAL (SELECT c.id FROM scirag.chunks c
                        WHERE c.document_id = nd.document_id AND c.kind <> 'section'
                        ORDER BY c.ordinal LIMIT per_entity) ch
    WHERE NOT EXISTS (SELECT 1 FROM visible v WHERE v.chunk_id = ch.id)),
  pool AS (
    SELECT v.chunk_id, v.hop, v.conf_at_hop, v.best_conf, v.rel, v.focus, v.ev, v.support FROM visible v
    UNION ALL
    SELECT c.chunk_id, c.hop, c.conf, c.best_conf, c.rel, c.focus, c.ev, c.support FROM cited c),
  ranked AS (
    SELECT p.chunk_id, p.hop,
           CASE WHEN rank_by = 'confidence' THEN p.best_conf ELSE p.conf_at_hop END AS conf,
           row_number() OVER (ORDER BY
             CASE WHEN rank_by = 'confidence' THEN -p.best_conf ELSE p.hop END,
             CASE WHEN rank_by = 'confidence' THEN p.hop ELSE -p.conf_at_hop END,
             p.rel DESC, p.ev DESC, p.focus DESC, p.support DESC, p.chunk_id) AS rnk
    FROM pool p)
  SELECT r.chunk_id, r.rnk::int, r.hop, r.conf
  FROM ranked r
  WHERE r.rnk <= n
  ORDER BY r.rnk;
END $$;
COMMENT ON FUNCTION scirag.search_graph(text, integer) IS
  'Graph layer: entities named in the question (offline surface matcher, or a model when graph option question_entities = model) seed a walk of at most two hops in either direction (recursive CTE, bounded per entity so hubs cannot blow it up); the evidence chunks of reached entities are ranked by hop distance (or by the strongest minimum-edge confidence when rank_by = confidence). Options: kg_options / SET scirag.graph_<key> (rank_by, min_confidence, citation_hop). Only chunks in the caller''s scope. A question over 4,000 characters or n over 1,000 is refused (SQLSTATE 22023).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.search_graph(text, integer) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.search_graph(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.search_graph(text, integer) TO scirag_loader, scirag_reader;
COMMIT;
