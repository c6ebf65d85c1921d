-- Deploy scirag:functions/search_graph
-- The graph layer: entities found in the question seed a bounded two-hop walk
-- (a recursive CTE) over relationships, and the evidence chunks of the entities
-- it reaches become candidates. Every table it reads is under row-level
-- security, so restricted evidence cannot seed, extend or contribute to a walk.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.graph_option(key text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- A session may override a ranking knob (SET scirag.graph_rank_by = 'confidence');
  -- callers clamp the bounds, so no setting can lift the hub bound.
  SELECT coalesce(nullif(btrim(current_setting('scirag.graph_' || key, true)), ''),
                  (SELECT o.value FROM scirag.kg_options o WHERE o.key = graph_option.key))
$$;
COMMENT ON FUNCTION scirag.graph_option(text) IS
  'Value of a graph option: the session setting scirag.graph_<key> when set, else the kg_options row.';

CREATE OR REPLACE FUNCTION scirag.graph_option_int(key text, fallback int, lo int, hi int)
RETURNS int
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT least(greatest(CASE WHEN v ~ '^\s*[0-9]{1,9}\s*$' THEN v::int ELSE fallback END, lo), hi)
  FROM (SELECT scirag.graph_option(key) AS v) o
$$;
COMMENT ON FUNCTION scirag.graph_option_int(text, int, int, int) IS
  'An integer graph option clamped to [lo, hi] (fallback when unset or not a number).';

CREATE OR REPLACE FUNCTION scirag.graph_seed_entities(query text, extra_names text[] DEFAULT '{}')
RETURNS TABLE (entity_id bigint, matched text, words int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
-- planned at ~1e7 even on an empty graph: a stock server (jit = on) would JIT-compile
-- its statements for hundreds of ms that the work never repays
SET jit = off
AS $$
  -- The offline question matcher: every word n-gram (up to 8 words) of the
  -- question is looked up among the surfaces of mentions the caller may see, so
  -- a name or alias seeds only when that literal surface occurs in eligible
  -- evidence (methodology 6.3), for tombstone names as much as active ones.
  -- Longest matches win ("corn stover" does not also seed "corn"). An
  -- all-capitals surface (an acronym such as VS or HI) seeds only when the
  -- question writes it in capitals. extra_names are names a model found in the
  -- question; they obey the same surface rule.
  WITH RECURSIVE q AS (
    SELECT left(coalesce(query, ''), 4000) AS q),
  toks AS MATERIALIZED (
    -- once (not per n-gram row); kg_normalize keeps the word count, so t (keys)
    -- and o (original case) align
    SELECT regexp_split_to_array(scirag.kg_normalize(q.q), ' ') AS t,
           regexp_split_to_array(btrim(regexp_replace(q.q, '[^A-Za-z0-9]+', ' ', 'g')), ' ') AS o
    FROM q),
  grams AS (
    SELECT i AS pos, len, array_to_string(t[i:i + len - 1], ' ') AS key,
           array_to_string(o[i:i + len - 1], ' ') !~ '[a-z]' AS capitals
    FROM toks, generate_series(1, cardinality(t)) AS i, generate_series(1, 8) AS len
    WHERE i + len - 1 <= cardinality(t) AND t[1] <> '' AND cardinality(t) = cardinality(o)
    UNION ALL
    SELECT 0, 0, x.key, true
    FROM (SELECT DISTINCT scirag.kg_normalize(nm) AS key FROM unnest(coalesce(extra_names, '{}')) AS nm LIMIT 20) x
    WHERE x.key <> ''),
  keys AS (
    SELECT g.key, bool_or(g.capitals) AS capitals FROM grams g GROUP BY g.key),
  -- A skip scan over (surface_key, entity_id): one index probe per distinct
  -- (surface, entity), however many chunks mention a popular surface, all in
  -- one statement (row-level security filters inside each probe).
  probe(key, capitals, entity_id) AS (
    SELECT k.key, k.capitals,
           (SELECT min(m.entity_id) FROM scirag.kg_mentions m
            WHERE m.surface_key = k.key AND (k.capitals OR NOT m.acronym))
    FROM keys k
    UNION ALL
    SELECT p.key, p.capitals,
           (SELECT min(m.entity_id) FROM scirag.kg_mentions m
            WHERE m.surface_key = p.key AND (p.capitals OR NOT m.acronym) AND m.entity_id > p.entity_id)
    FROM probe p WHERE p.entity_id IS NOT NULL),
  hits AS (
    SELECT g.pos, g.len, g.key, p.entity_id
    FROM probe p JOIN grams g ON g.key = p.key
    WHERE p.entity_id IS NOT NULL),
  maximal AS (
    -- a model's name (len 0) always counts; a question n-gram only when no longer match covers it
    SELECT h.* FROM hits h
    WHERE h.len = 0 OR NOT EXISTS (SELECT 1 FROM hits o
                                   WHERE o.len > h.len AND o.pos > 0 AND o.pos <= h.pos
                                     AND o.pos + o.len >= h.pos + h.len))
  SELECT s.entity_id, min(s.key), max(s.len)
  FROM maximal s
  GROUP BY s.entity_id
  ORDER BY max(s.len) DESC, count(*) DESC, s.entity_id
$$;
COMMENT ON FUNCTION scirag.graph_seed_entities(text, text[]) IS
  'Entities named in a question, found through the surfaces of mentions the caller may see (longest match first). extra_names: names a model proposed.';

CREATE OR REPLACE FUNCTION scirag.graph_question_entities(query text)
RETURNS text[]
LANGUAGE plpython3u
SET search_path = pg_catalog, pg_temp
AS $$
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.graph_query import question_entities
return question_entities(plpy, GD, query or '')
$$;
COMMENT ON FUNCTION scirag.graph_question_entities(text) IS
  'Entity names a model finds in a question (SCIRAG_LLM_* in the server environment); empty without a model. Only a proposal: search_graph seeds from them only through visible surfaces.';

CREATE OR REPLACE FUNCTION scirag.search_graph(query text, n int DEFAULT 100)
RETURNS TABLE (chunk_id bigint, rank int, hops int, confidence double precision)
LANGUAGE plpgsql STABLE
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
  qlex := ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', left(query, 4000))) AS u);

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
COMMENT ON FUNCTION scirag.search_graph(text, int) IS
  'Graph layer: entities named in the question (offline surface matcher, or a model when graph option question_entities = model) seed a walk of at most two hops in either direction (recursive CTE, bounded per entity so hubs cannot blow it up); the evidence chunks of reached entities are ranked by hop distance (or by the strongest minimum-edge confidence when rank_by = confidence). Options: kg_options / SET scirag.graph_<key> (rank_by, min_confidence, citation_hop). Only chunks in the caller''s scope.';

REVOKE EXECUTE ON FUNCTION scirag.graph_option(text), scirag.graph_option_int(text, int, int, int),
  scirag.graph_seed_entities(text, text[]),
  scirag.graph_question_entities(text), scirag.search_graph(text, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.graph_option(text), scirag.graph_option_int(text, int, int, int),
  scirag.graph_seed_entities(text, text[]),
  scirag.graph_question_entities(text), scirag.search_graph(text, int)
  TO scirag_reader, scirag_loader;
COMMIT;
