-- Deploy scirag:functions/graph_entities
-- Split (issue 28): scirag.graph_question_entities and scirag.graph_seed_entities, moved out of functions/search_graph (sql/functions/search_graph.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- with the reader wall's settings declared where the function is defined (the released
-- script left them to scirag.apply_reader_wall()); a later change to it copies this script
-- only: after a tag, `sqitch rework functions/graph_entities` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.graph_question_entities(query text)
RETURNS text[]
LANGUAGE plpython3u
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.graph_query import question_entities
return question_entities(plpy, GD, query or '')
$$;
COMMENT ON FUNCTION scirag.graph_question_entities(text) IS
  'Entity names a model finds in a question (SCIRAG_LLM_* in the server environment); empty without a model. Only a proposal: search_graph seeds from them only through visible surfaces.';

CREATE OR REPLACE FUNCTION scirag.graph_seed_entities(query text, extra_names text[] DEFAULT '{}')
RETURNS TABLE (entity_id bigint, matched text, words int)
LANGUAGE sql STABLE
SECURITY DEFINER
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

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.graph_question_entities(text) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.graph_question_entities(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.graph_question_entities(text) TO scirag_loader, scirag_reader;
ALTER FUNCTION scirag.graph_seed_entities(text, text[]) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.graph_seed_entities(text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.graph_seed_entities(text, text[]) TO scirag_loader, scirag_reader;
COMMIT;
