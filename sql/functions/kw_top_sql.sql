-- Deploy scirag:functions/kw_top_sql
-- Split (issue 28): scirag.kw_top_sql, moved out of functions/search_keyword (sql/functions/search_keyword.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges)
-- but for one comment line in kw_top_sql's body, reworded so that it cites no document the
-- repository does not hold (scripts/test_split.sh, COMMENT_EDITS, checks that only
-- comment lines differ),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/kw_top_sql` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.kw_top_sql(t_lex text[], t_idf double precision[], k1 double precision,
                                             b double precision, avgdl double precision, n int,
                                             phrase_q tsquery, neg_q tsquery, refs boolean)
RETURNS TABLE (chunk_id bigint, score double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
-- The same exact top n as scirag.kw_top, in PL/pgSQL, for a server where PL/Python is
-- out of reach (a rule of the layers: every layer that needs no model retrieves
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
COMMIT;
