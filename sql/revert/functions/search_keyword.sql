-- Revert scirag:functions/search_keyword to its @v1.0 version
BEGIN;
CREATE OR REPLACE FUNCTION scirag.search_keyword(query text, n int DEFAULT 100, proximity double precision DEFAULT NULL)
RETURNS TABLE (chunk_id bigint, rank int, score double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
-- BM25 over English lexemes (stemmed, stop words dropped). Query terms are OR-ed,
-- so a natural-language question is never ANDed into zero hits; "quoted phrases"
-- must occur as phrases and a -word must not occur. Question terms that stand next to
-- each other ("Table 5", "gating mechanism") earn a proximity bonus where the chunk has
-- them as a phrase too (setting bm25_proximity). N, the average length and the
-- document frequencies are sums over the (license, source) classes that row-level
-- security shows the caller: they describe the caller's scope and reveal nothing
-- about text it cannot see.
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
BEGIN
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
  RETURN QUERY
  WITH qt AS (SELECT * FROM unnest(lexemes, qtfs) AS t(lexeme, qtf)),
  cls AS (SELECT sum(s.n_chunks)::float8 AS n, sum(s.sum_dl)::float8 / nullif(sum(s.n_chunks), 0) AS avgdl
          FROM scirag.kw_class_stats s),
  df AS (SELECT s.lexeme, sum(s.df)::float8 AS df FROM scirag.kw_term_stats s
         WHERE s.lexeme = ANY (lexemes) GROUP BY s.lexeme),
  w AS (SELECT qt.lexeme, qt.qtf * ln(1 + (cls.n - df.df + 0.5) / (df.df + 0.5)) AS idf
        FROM qt JOIN df ON df.lexeme = qt.lexeme CROSS JOIN cls),
  scored AS (
    SELECT p.chunk_id AS id,
           sum(w.idf * p.tf * (k1 + 1) / (p.tf + k1 * (1 - b + b * p.dl / cls.avgdl))) AS s
    FROM w JOIN scirag.kw_postings p ON p.lexeme = w.lexeme CROSS JOIN cls
    GROUP BY p.chunk_id),
  kept AS (
    SELECT sc.id, sc.s FROM scored sc
    WHERE (phrase_q IS NULL AND neg_q IS NULL)
       OR EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.id = sc.id
                  AND (phrase_q IS NULL OR c.tsv @@ phrase_q)
                  AND (neg_q IS NULL OR NOT c.tsv @@ neg_q))
    ORDER BY sc.s DESC, sc.id
    LIMIT n),
  -- proximity bonus, within the BM25 top n: prox x the mean IDF of each pair found as a phrase
  pairs AS (SELECT x.q, (wa.idf + wb.idf) / 2 AS idf
            FROM unnest(pair_a, pair_b, pair_q) AS x(a, b, q)
            JOIN w wa ON wa.lexeme = x.a JOIN w wb ON wb.lexeme = x.b),
  bonus AS (SELECT kept.id, sum(pairs.idf) AS idf
            FROM kept JOIN scirag.chunks c ON c.id = kept.id JOIN pairs ON c.tsv @@ pairs.q
            WHERE cardinality(pair_q) > 0
            GROUP BY kept.id)
  SELECT kept.id, (row_number() OVER (ORDER BY kept.s + prox * coalesce(bonus.idf, 0) DESC, kept.id))::int,
         kept.s + prox * coalesce(bonus.idf, 0)
  FROM kept LEFT JOIN bonus ON bonus.id = kept.id
  ORDER BY 3 DESC, 1;
END $$;
COMMENT ON FUNCTION scirag.search_keyword(text, int, double precision) IS
  'Keyword layer: BM25 (settings bm25_k1, bm25_b) over English lexemes, OR of the question''s terms, with "phrases" and -negation, plus a proximity bonus for neighbouring question terms found as a phrase (setting bm25_proximity, or the proximity argument; 0 = plain BM25); never raises.';
GRANT EXECUTE ON FUNCTION scirag.search_keyword(text, int, double precision) TO scirag_reader, scirag_loader;
COMMIT;
