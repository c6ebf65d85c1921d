-- Deploy scirag:functions/search_keyword_main
-- Split (issue 28): scirag.search_keyword, moved out of functions/search_keyword (sql/functions/search_keyword.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/search_keyword_main` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.search_keyword(query text, n int DEFAULT 100, proximity double precision DEFAULT NULL)
RETURNS TABLE (chunk_id bigint, rank int, score double precision)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- Every statement here is an index probe or a small array job: JIT compilation
-- (tens of ms) never pays off, and a stock server's jit = on must not add it.
SET jit = off
AS $$
-- BM25 over English lexemes (stemmed, stop words dropped). Query terms are OR-ed,
-- so a natural-language question is never ANDed into zero hits; "quoted phrases"
-- must occur as phrases and a -word must not occur. Question terms that stand next to
-- each other ("Table 5", "gating mechanism") earn a proximity bonus where the chunk has
-- them as a phrase too (setting bm25_proximity). N, the average length and the
-- document frequencies are sums over the (license, source) classes that row-level
-- security shows the caller: they describe the caller's scope and reveal nothing
-- about text it cannot see.
--
-- Exact top n with block-max pruning: scirag.kw_top (PL/Python, scirag_helpers/bm25.py)
-- reads the query terms' compacted blocks (each term's in descending score bound, the
-- terms interleaved so that the unread bounds fall fastest per posting) as binary strings
-- (kw_blocks.packed) and scores them in numpy, checks the candidates against
-- scirag.chunks as the caller sees it (row-level security, phrases, negation,
-- reference lists) with the exact score from the chunk's tsvector, and stops reading
-- once no unread posting can lift a chunk into the top n. Summing postings in SQL
-- cost about 1 us each; a million chunks put hundreds of thousands behind a claim.
-- A query over 4,000 characters and n over 1,000 are refused (SQLSTATE 22023), as
-- for every entry point (scirag.check_question, scirag.check_limit).
DECLARE
  k1 double precision;
  b double precision;
  q text := left(coalesce(query, ''), 20000);
  positive text;
  phrase text;
  neg text;
  phrase_q tsquery;
  neg_q tsquery;
  qv tsvector;
  lexemes text[];
  qtfs int[];
  prox double precision;
  pair_a text[];
  pair_b text[];
  pair_q tsquery[];
  big_n double precision;
  avgdl double precision;
  t_lex text[];                 -- query terms the caller's statistics know, and per term
  t_idf double precision[];     --   query tf x IDF
  v_ids bigint[];               -- the BM25 top n and their scores
  v_sc double precision[];
  -- chunks of a paper's reference list stay out unless the session asks for them
  refs boolean := coalesce(lower(btrim(current_setting('scirag.include_references', true))) IN ('on', 'true', '1', 'yes'), false);
BEGIN
  PERFORM scirag.check_question(query, 'scirag.search_keyword');
  PERFORM scirag.check_limit(n, 'n', 'scirag.search_keyword');
  IF coalesce(n, 0) <= 0 THEN
    RETURN;
  END IF;
  SELECT max(value) FILTER (WHERE key = 'bm25_k1')::float8, max(value) FILTER (WHERE key = 'bm25_b')::float8,
         coalesce(max(value) FILTER (WHERE key = 'bm25_proximity')::float8, 0)
    INTO k1, b, prox FROM scirag.settings WHERE key IN ('bm25_k1', 'bm25_b', 'bm25_proximity');
  prox := greatest(coalesce(proximity, prox), 0);  -- a call may override the setting (ablations)
  BEGIN
    -- a negated phrase, -"...", must not occur; take it out before the phrases proper
    FOR phrase IN SELECT m[2] FROM regexp_matches(q, '(^|\s)-"([^"]*)"', 'g') AS m LOOP
      IF numnode(phraseto_tsquery('english', phrase)) > 0 THEN
        neg_q := CASE WHEN neg_q IS NULL THEN phraseto_tsquery('english', phrase)
                      ELSE neg_q || phraseto_tsquery('english', phrase) END;
      END IF;
    END LOOP;
    q := regexp_replace(q, '(^|\s)-"[^"]*"', ' ', 'g');
    FOR phrase IN SELECT m[1] FROM regexp_matches(q, '"([^"]*)"', 'g') AS m LOOP
      IF numnode(phraseto_tsquery('english', phrase)) > 0 THEN
        phrase_q := CASE WHEN phrase_q IS NULL THEN phraseto_tsquery('english', phrase)
                         ELSE phrase_q && phraseto_tsquery('english', phrase) END;
      END IF;
    END LOOP;
    -- phrase words still score; the quote characters themselves (balanced or not) go
    positive := replace(q, '"', ' ');
    -- a -word starts with a letter: "-0.01" in a claim is a negative number, not a negation
    FOR neg IN SELECT m[2] FROM regexp_matches(positive, '(^|\s)-([[:alpha:]][^\s]*)', 'g') AS m LOOP
      IF numnode(plainto_tsquery('english', neg)) > 0 THEN
        neg_q := CASE WHEN neg_q IS NULL THEN plainto_tsquery('english', neg)
                      ELSE neg_q || plainto_tsquery('english', neg) END;
      END IF;
    END LOOP;
    positive := regexp_replace(positive, '(^|\s)-[[:alpha:]][^\s]*', ' ', 'g');
    qv := to_tsvector('english', positive);
    SELECT array_agg(u.lexeme), array_agg(coalesce(cardinality(u.positions), 1))
      INTO lexemes, qtfs FROM unnest(qv) AS u;
  EXCEPTION WHEN OTHERS THEN
    RETURN;  -- input the text-search parser cannot read matches nothing; it never raises
  END;
  IF lexemes IS NULL THEN
    RETURN;  -- only stop words, punctuation or negations
  END IF;
  IF prox > 0 THEN
    BEGIN
      -- each pair of neighbouring question terms becomes a phrase query with the gap the
      -- question has between them (a dropped stop word counts, as in phraseto_tsquery)
      WITH p AS (SELECT t.lexeme, u.pos
                 FROM unnest(qv) AS t, unnest(t.positions) AS u(pos)),
           s AS (SELECT p.lexeme, lead(p.lexeme) OVER (ORDER BY p.pos) AS nxt,
                        lead(p.pos) OVER (ORDER BY p.pos) - p.pos AS gap FROM p),
           -- a lexeme as a tsquery without re-parsing it: quoted, with \ and ' escaped
           l AS (SELECT DISTINCT s.lexeme, s.nxt, s.gap,
                        ('''' || replace(replace(s.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS qa,
                        ('''' || replace(replace(s.nxt, '\', '\\'), '''', '''''') || '''')::tsquery AS qb
                 FROM s WHERE s.nxt IS NOT NULL AND s.nxt <> s.lexeme AND s.gap <= 3)
      SELECT array_agg(l.lexeme), array_agg(l.nxt), array_agg(tsquery_phrase(l.qa, l.qb, l.gap))
        INTO pair_a, pair_b, pair_q
      FROM l;
    EXCEPTION WHEN OTHERS THEN
      pair_q := NULL;  -- no pairs: plain BM25
    END;
  END IF;
  SELECT sum(s.n_chunks)::float8, sum(s.sum_dl)::float8 / nullif(sum(s.n_chunks), 0)
    INTO big_n, avgdl FROM scirag.kw_class_stats s;
  IF avgdl IS NULL THEN
    RETURN;  -- nothing indexed in scope
  END IF;
  SELECT array_agg(qt.lexeme ORDER BY qt.lexeme),
         array_agg(qt.qtf * ln(1 + (big_n - df.df + 0.5) / (df.df + 0.5)) ORDER BY qt.lexeme)
    INTO t_lex, t_idf
  FROM unnest(lexemes, qtfs) AS qt(lexeme, qtf)
  JOIN (SELECT s.lexeme, sum(s.df)::float8 AS df FROM scirag.kw_term_stats s
        WHERE s.lexeme = ANY (lexemes) GROUP BY s.lexeme) df ON df.lexeme = qt.lexeme;
  IF t_lex IS NULL THEN
    RETURN;
  END IF;
  -- numpy where PL/Python is in reach (this runs as scirag_api), else the same in PL/pgSQL
  IF has_function_privilege('scirag.plpy_bootstrap()', 'EXECUTE') THEN
    SELECT coalesce(array_agg(t.chunk_id), '{}'), coalesce(array_agg(t.score), '{}') INTO v_ids, v_sc
    FROM scirag.kw_top(t_lex, t_idf, k1, b, avgdl, n, phrase_q, neg_q, refs) AS t;
  ELSE
    SELECT coalesce(array_agg(t.chunk_id), '{}'), coalesce(array_agg(t.score), '{}') INTO v_ids, v_sc
    FROM scirag.kw_top_sql(t_lex, t_idf, k1, b, avgdl, n, phrase_q, neg_q, refs) AS t;
  END IF;
  RETURN QUERY
  WITH w AS (SELECT * FROM unnest(t_lex, t_idf) AS w(lexeme, idf)),
  kept AS MATERIALIZED (
    SELECT v.id, v.s FROM unnest(v_ids, v_sc) AS v(id, s)
    ORDER BY v.s DESC, v.id
    LIMIT n),
  -- proximity bonus, within the BM25 top n: prox x the mean IDF of each pair found as a phrase
  pairs AS (SELECT x.q, (wa.idf + wb.idf) / 2 AS idf
            FROM unnest(pair_a, pair_b, pair_q) AS x(a, b, q)
            JOIN w wa ON wa.lexeme = x.a JOIN w wb ON wb.lexeme = x.b),
  -- (each chunk's tsvector is cut down to the query terms once, in C, and kept:
  -- matching every pair against the whole stored tsvector decompressed it per pair)
  fv AS MATERIALIZED (
    SELECT kept.id, ts_filter(setweight(setweight(c.tsv, 'D'), 'A', t_lex), '{a}') AS v
    FROM kept JOIN scirag.chunks c ON c.id = kept.id
    WHERE cardinality(pair_q) > 0),
  bonus AS (SELECT fv.id, sum(pairs.idf) AS idf
            FROM fv JOIN pairs ON fv.v @@ pairs.q
            GROUP BY fv.id)
  SELECT kept.id, (row_number() OVER (ORDER BY kept.s + prox * coalesce(bonus.idf, 0) DESC, kept.id))::int,
         kept.s + prox * coalesce(bonus.idf, 0)
  FROM kept LEFT JOIN bonus ON bonus.id = kept.id
  ORDER BY 3 DESC, 1;
END $$;
COMMENT ON FUNCTION scirag.search_keyword(text, int, double precision) IS
  'Keyword layer: BM25 (settings bm25_k1, bm25_b) over English lexemes, OR of the question''s terms, with "phrases" and -negation, plus a proximity bonus for neighbouring question terms found as a phrase (setting bm25_proximity, or the proximity argument; 0 = plain BM25); exact top n by block-max pruning over kw_blocks.packed and fresh kw_postings (scirag.kw_top); reference-list chunks only with scirag.include_references on; refuses (22023) a query over 4,000 characters and n over 1,000; otherwise never raises.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.search_keyword(text, int, double precision) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.search_keyword(text, int, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.search_keyword(text, int, double precision) TO scirag_reader, scirag_loader;
COMMIT;
