-- Deploy scirag:functions/search_keyword
BEGIN;
CREATE OR REPLACE FUNCTION scirag.kw_top(lexemes text[], idf double precision[], k1 double precision,
                                         b double precision, avgdl double precision, n int,
                                         phrase_q tsquery, neg_q tsquery, refs boolean)
RETURNS TABLE (chunk_id bigint, score double precision)
LANGUAGE plpython3u STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
# STABLE matters: every statement inside sees the calling query's snapshot, so the
# blocks bm25.top_n lists and then reads by ctid are the same rows.
plpy.execute('SELECT scirag.plpy_bootstrap()')
from scirag_helpers.bm25 import top_n
if not lexemes or not n or n <= 0:
    return []
top = top_n(plpy, GD, lexemes, idf, k1, b, avgdl, n, phrase_q, neg_q, bool(refs))
if top is None:
    # chunk ids spread too wide for the dense accumulators: the same ranking in PL/pgSQL
    plan = GD.get('scirag_kw_top_sql') or GD.setdefault('scirag_kw_top_sql', plpy.prepare(
        'SELECT chunk_id, score FROM scirag.kw_top_sql($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        ['text[]', 'float8[]', 'float8', 'float8', 'float8', 'int', 'tsquery', 'tsquery', 'boolean']))
    return [(r['chunk_id'], r['score']) for r in plan.execute([lexemes, idf, k1, b, avgdl, n, phrase_q, neg_q, refs])]
return top
$$;
COMMENT ON FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) IS
  'Exact BM25 top n of search_keyword (scirag_helpers/bm25.py): block-max pruning over kw_blocks.packed and fresh kw_postings, candidates checked and scored against scirag.chunks as the caller sees them. Internal: runs inside search_keyword (as scirag_api); readers may not call it.';
-- Only the API runs it: it takes its statistics on trust, and as a reader it could not
-- read kw_blocks anyway.
REVOKE ALL ON FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.kw_top(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) TO scirag_api, scirag_loader;

CREATE OR REPLACE FUNCTION scirag.kw_top_trace()
RETURNS jsonb
LANGUAGE plpython3u VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
# what the session's last kw_top call did (bm25.TRACE_KEYS), once: NULL until kw_top runs again
import json
trace = GD.pop('scirag_bm25_trace', None)
return None if trace is None else json.dumps(trace)
$$;
COMMENT ON FUNCTION scirag.kw_top_trace() IS
  'Diagnostics: what this session''s last scirag.kw_top call did (postings listed and read, blocks listed and read, read statements, chunks checked and scored, checks; sql_fallback when it handed over to kw_top_sql), as jsonb, once: NULL until kw_top runs again. For scripts/bench_keyword.py --trace. Superusers only: the counts include postings of rows the caller may not see.';
REVOKE ALL ON FUNCTION scirag.kw_top_trace() FROM PUBLIC;

CREATE OR REPLACE FUNCTION scirag.kw_top_sql(t_lex text[], t_idf double precision[], k1 double precision,
                                             b double precision, avgdl double precision, n int,
                                             phrase_q tsquery, neg_q tsquery, refs boolean)
RETURNS TABLE (chunk_id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
-- The same exact top n as scirag.kw_top, in PL/pgSQL, for a server where PL/Python is
-- out of reach (DESIGN.md section 2: every layer that needs no model retrieves
-- without it). MaxScore with block-max bounds over kw_blocks' arrays, as released in
-- @v1.2: about 1 us a posting, so about 2x slower than kw_top at 100k chunks and 2.5x at
-- 1M (p50, scripts/bench_keyword.py).
-- Phase 1 seeds theta, the n-th best score: it reads the units of the rarest terms
-- first (16n postings), sums each chunk's scores over what it read and scores the 2n
-- best sums exactly. Phase 2 reads the essential terms (those the other terms' bounds
-- cannot replace, counted against 0.6 theta) from their units whose potential reaches
-- theta; each chunk gets a bound (its exact score over those terms plus the other
-- terms' largest bounds) and chunks are scored exactly in order of bound, theta
-- rising, until the next bound is below theta. Exact scoring reads the chunk as the
-- caller sees it in scirag.chunks (row-level security, phrases, negation, reference
-- lists).
DECLARE
  t_max double precision[];     --   the largest bound of its units
  t_ess boolean[];              --   whether it can still contribute to a top-n chunk
  u_ti int[];                   -- units in order of potential: term index,
  u_pot double precision[];     --   potential,
  u_lic scirag.license_class[]; --   block key (class and number) or fresh posting
  u_src text[];
  u_blk int[];
  u_cid bigint[];
  u_tf int[];
  u_dl int[];
  u_cnt int[];                  --   postings in the unit
  nu int;
  pos int := 1;
  batch int := 1;
  theta double precision := 0;
  b_ix int[];
  c_ids bigint[];
  c_dls int[];
  v_ids bigint[] := '{}';       -- chunks scored so far (visible, phrases and negation satisfied)
  v_sc double precision[] := '{}';
  seen bigint[] := '{}';        -- every chunk checked so far, visible or not
  p_ids bigint[];               -- phase 2 candidates by descending bound, their lengths and bounds
  p_dls int[];
  p_bnd double precision[];
  k int;
  rd int[] := '{}';             -- units phase 1 has read
  rest_ne double precision;     -- the bounds of the terms phase 2 does not read, summed
  -- chunks of a paper's reference list stay out unless the session asks for them
BEGIN
  -- every unit of every query term, with its bound; then bounds per term and potentials
  WITH u AS (
    SELECT t.i::int AS ti, k.license AS lic, k.source AS src, k.block AS blk, NULL::bigint AS cid,
           NULL::int AS tf, NULL::int AS dl, cardinality(k.chunk_ids) AS cnt,
           t.idf * k.max_tf * (k1 + 1) / (k.max_tf + k1 * (1 - b + b * k.min_dl / avgdl)) AS ub
    FROM unnest(t_lex, t_idf) WITH ORDINALITY AS t(lexeme, idf, i)
    JOIN scirag.kw_blocks k ON k.lexeme = t.lexeme
    UNION ALL
    SELECT t.i::int, p.license, p.source, NULL, p.chunk_id, p.tf, p.dl, 1,
           t.idf * p.tf * (k1 + 1) / (p.tf + k1 * (1 - b + b * p.dl / avgdl))
    FROM unnest(t_lex, t_idf) WITH ORDINALITY AS t(lexeme, idf, i)
    JOIN scirag.kw_postings p ON p.lexeme = t.lexeme),
  m AS (SELECT t.i::int AS ti, coalesce(max(u.ub), 0) AS mx
        FROM generate_series(1, cardinality(t_lex)) AS t(i) LEFT JOIN u ON u.ti = t.i GROUP BY t.i),
  tot AS (SELECT sum(m.mx) AS s FROM m)
  -- (one sort feeds every unit array, in order of potential)
  SELECT (SELECT array_agg(m.mx ORDER BY m.ti) FROM m),
         array_agg(o.ti), array_agg(o.pot), array_agg(o.lic), array_agg(o.src), array_agg(o.blk),
         array_agg(o.cid), array_agg(o.tf), array_agg(o.dl), array_agg(o.cnt)
    INTO t_max, u_ti, u_pot, u_lic, u_src, u_blk, u_cid, u_tf, u_dl, u_cnt
  FROM (SELECT u.ti, u.ub + tot.s - m.mx AS pot, u.lic, u.src, u.blk, u.cid, u.tf, u.dl, u.cnt
        FROM u JOIN m ON m.ti = u.ti CROSS JOIN tot
        ORDER BY u.ub + tot.s - m.mx DESC, u.ti, u.blk, u.cid) o;
  nu := coalesce(cardinality(u_ti), 0);
  t_ess := array_fill(true, ARRAY[cardinality(t_lex)]);
  LOOP
    IF theta = 0 AND pos <= nu THEN
      -- Phase 1, until n chunks are scored (theta > 0): the units of the rarest terms
      -- (16n postings, twice as many each round while fewer than n chunks qualify),
      -- every chunk in them summed over the terms read (array work, no chunk fetched);
      -- the 2n best of those sums not scored yet are scored exactly. (Further rounds
      -- to raise theta before phase 2 cost more than they saved, measured at 100k.)
      b_ix := ARRAY(SELECT u.ix FROM (SELECT j.ix, sum(coalesce(u_cnt[j.ix], 1)) OVER (ORDER BY t_idf[u_ti[j.ix]] DESC, j.ix) AS cum
                                      FROM generate_series(1, nu) AS j(ix) WHERE j.ix <> ALL (rd)) u
                    WHERE u.cum - coalesce(u_cnt[u.ix], 1) < batch * 16 * n);
      rd := rd || b_ix;
      pos := CASE WHEN cardinality(rd) >= nu THEN nu + 1 ELSE 1 END;
      SELECT array_agg(y.cid), array_agg(y.dl) INTO c_ids, c_dls
      FROM (SELECT x.cid, x.dl
      FROM (SELECT e.cid, max(e.dl) AS dl, sum(e.s) AS partial
            FROM (SELECT kb.chunk_ids AS ids, kb.tfs::int[] AS tfs, kb.dls, u_ti[j.ix] AS ti
                  FROM unnest(rd) AS j(ix)
                  JOIN scirag.kw_blocks kb ON kb.lexeme = t_lex[u_ti[j.ix]] AND kb.license = u_lic[j.ix]
                                          AND kb.source = u_src[j.ix] AND kb.block = u_blk[j.ix]
                  UNION ALL
                  SELECT ARRAY[u_cid[j.ix]], ARRAY[u_tf[j.ix]], ARRAY[u_dl[j.ix]], u_ti[j.ix]
                  FROM unnest(rd) AS j(ix) WHERE u_blk[j.ix] IS NULL) g,
                 LATERAL (SELECT x.cid, x.dl, t_idf[g.ti] * x.tf * (k1 + 1) / (x.tf + k1 * (1 - b + b * x.dl / avgdl)) AS s
                          FROM unnest(g.ids, g.tfs, g.dls) AS x(cid, tf, dl)) e
            GROUP BY e.cid) x
      WHERE x.cid NOT IN (SELECT sn.id FROM unnest(seen) AS sn(id))
      ORDER BY x.partial DESC, x.cid
      LIMIT 2 * n) y;
      batch := batch * 2;
    ELSE
      IF p_ids IS NULL THEN
        -- Phase 2 (MaxScore), once: the essential terms are those whose bound, with
        -- every weaker term's, reaches 0.6 theta (theta would do for exactness; see
        -- above). Every posting of their units that can still reach theta is read
        -- (array work, no chunk fetched); a chunk's bound is its exact score over
        -- those terms plus the bounds of the other terms. Chunks already scored are
        -- left out by a hashed anti-join (= ANY over the array compared every pair).
        SELECT array_agg(e.ess ORDER BY e.i) INTO t_ess
        FROM (SELECT m.i, sum(m.mx) OVER (ORDER BY m.mx, m.i) >= 0.6 * theta AS ess
              FROM unnest(t_max) WITH ORDINALITY AS m(mx, i)) e;
        rest_ne := coalesce((SELECT sum(m.mx) FROM unnest(t_max, t_ess) AS m(mx, ess) WHERE NOT m.ess), 0);
        -- (one sort feeds the three arrays in the same order)
        SELECT coalesce(array_agg(y.cid), '{}'), array_agg(y.dl), array_agg(y.bound)
          INTO p_ids, p_dls, p_bnd
        FROM (SELECT x.cid, x.dl, x.bound
        FROM (SELECT e.cid, max(e.dl) AS dl, sum(e.s) + rest_ne AS bound
              FROM (SELECT kb.chunk_ids AS ids, kb.tfs::int[] AS tfs, kb.dls, u.ti
                    FROM unnest(u_ti, u_pot, u_lic, u_src, u_blk) AS u(ti, pot, lic, src, blk)
                    JOIN scirag.kw_blocks kb ON kb.lexeme = t_lex[u.ti] AND kb.license = u.lic
                                            AND kb.source = u.src AND kb.block = u.blk
                    WHERE u.blk IS NOT NULL AND t_ess[u.ti] AND u.pot >= theta
                    UNION ALL
                    SELECT ARRAY[u.cid], ARRAY[u.tf], ARRAY[u.dl], u.ti
                    FROM unnest(u_ti, u_pot, u_blk, u_cid, u_tf, u_dl) AS u(ti, pot, blk, cid, tf, dl)
                    WHERE u.blk IS NULL AND t_ess[u.ti] AND u.pot >= theta) g,
                   LATERAL (SELECT x.cid, x.dl, t_idf[g.ti] * x.tf * (k1 + 1) / (x.tf + k1 * (1 - b + b * x.dl / avgdl)) AS s
                            FROM unnest(g.ids, g.tfs, g.dls) AS x(cid, tf, dl)) e
              GROUP BY e.cid) x
        WHERE x.bound >= theta AND x.cid NOT IN (SELECT sn.id FROM unnest(seen) AS sn(id))
        ORDER BY x.bound DESC, x.cid) y;
        k := 1;
      END IF;
      -- the next chunks by bound, while their bound can still reach theta
      EXIT WHEN k > cardinality(p_ids) OR p_bnd[k] < theta;
      SELECT array_agg(x.id), array_agg(x.dl) INTO c_ids, c_dls
      FROM unnest(p_ids[k:k + 255], p_dls[k:k + 255], p_bnd[k:k + 255]) AS x(id, dl, bnd) WHERE x.bnd >= theta;
      k := k + 256;
    END IF;
    IF c_ids IS NOT NULL THEN
      seen := seen || c_ids;
      -- Exact BM25 of each candidate the caller may see (row-level security on
      -- scirag.chunks, phrases, negation): the query terms' frequencies are cut out of
      -- its tsvector in C (mark them with weight A, keep weight A), its length came
      -- with the posting.
      WITH sc AS (
        SELECT c.id, (SELECT sum(t_idf[array_position(t_lex, x.lexeme)] * cardinality(x.positions) * (k1 + 1)
                                 / (cardinality(x.positions) + k1 * (1 - b + b * k.dl / avgdl)))
                      FROM unnest(ts_filter(setweight(setweight(c.tsv, 'D'), 'A', t_lex), '{a}')) AS x) AS s
        FROM unnest(c_ids, c_dls) AS k(id, dl)
        JOIN scirag.chunks c ON c.id = k.id
        WHERE (phrase_q IS NULL OR c.tsv @@ phrase_q)
          AND (neg_q IS NULL OR NOT c.tsv @@ neg_q)
          AND (refs OR NOT c.is_reference))
      SELECT v_ids || coalesce(array_agg(sc.id), '{}'), v_sc || coalesce(array_agg(sc.s), '{}')
        INTO v_ids, v_sc FROM sc;
      IF cardinality(v_ids) >= n THEN
        -- (a hair lower than the n-th score: bounds and scores are sums in different orders)
        -- only the n best scored can be returned: keep those
        SELECT array_agg(x.id), array_agg(x.s) INTO v_ids, v_sc
        FROM (SELECT x.id, x.s FROM unnest(v_ids, v_sc) AS x(id, s) ORDER BY x.s DESC, x.id LIMIT n) x;
        theta := v_sc[n] * (1 - 1e-9);
      END IF;
    END IF;
  END LOOP;
  RETURN QUERY SELECT v.id, v.s FROM unnest(v_ids, v_sc) AS v(id, s) ORDER BY v.s DESC, v.id LIMIT n;
END $$;
COMMENT ON FUNCTION scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) IS
  'The exact BM25 top n of search_keyword in PL/pgSQL (MaxScore with block-max bounds over kw_blocks arrays): used where PL/Python is out of reach; returns what scirag.kw_top returns. Internal: runs inside search_keyword (as scirag_api).';
REVOKE ALL ON FUNCTION scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.kw_top_sql(text[], double precision[], double precision, double precision, double precision, int, tsquery, tsquery, boolean) TO scirag_api, scirag_loader;

CREATE OR REPLACE FUNCTION scirag.search_keyword(query text, n int DEFAULT 100, proximity double precision DEFAULT NULL)
RETURNS TABLE (chunk_id bigint, rank int, score double precision)
LANGUAGE plpgsql STABLE
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
GRANT EXECUTE ON FUNCTION scirag.search_keyword(text, int, double precision) TO scirag_reader, scirag_loader;
-- CREATE OR REPLACE made search_keyword SECURITY INVOKER again: back behind the wall
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
