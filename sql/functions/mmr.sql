-- Deploy scirag:functions/mmr
-- Maximal marginal relevance (VulcanLab retrieval step 5): picks k chunks that are
-- relevant and unlike the ones already picked. Relevance is the caller's (fused)
-- score, min-max normalised; similarity is the cosine similarity of the chunks'
-- stored embeddings, read through row-level security.
-- Reworked (issue 16): mmr_lambda's default is the preset default (scirag.preset_schema(),
-- the one place of VulcanLab's defaults) and its bounds are those of retrieve's
-- mmr_lambda option (scirag.retrieve_option_schema(), the one place of option bounds).
-- Reworked (issue 26): chunk_ids holds at most 1,000 ids (scirag.check_limit; 2 million were
-- accepted).
BEGIN;

CREATE OR REPLACE FUNCTION scirag.mmr_select(chunk_ids bigint[], relevance double precision[], k int,
                                             mmr_lambda double precision
                                               DEFAULT (scirag.preset_defaults() #>> '{retrieval,mmr_lambda}')::float8)
RETURNS TABLE (chunk_id bigint, rank int)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  ids bigint[];
  rel double precision[];
  sim double precision[];
  n int;
  bounds jsonb := scirag.retrieve_option_schema()->'mmr_lambda';
  lo double precision;
  hi double precision;
  picked boolean[];
  max_sim double precision[];
  best int;
  best_score double precision;
  sc double precision;
  i int;
  j int;
  r int := 0;
BEGIN
  PERFORM scirag.check_limit(cardinality(chunk_ids), 'the number of chunk_ids', 'scirag.mmr_select');
  IF cardinality(coalesce(chunk_ids, '{}')) <> cardinality(coalesce(relevance, '{}')) THEN
    RAISE EXCEPTION 'scirag.mmr_select: chunk_ids and relevance must have the same length (% and %)',
      cardinality(coalesce(chunk_ids, '{}')), cardinality(coalesce(relevance, '{}')) USING ERRCODE = '22023';
  END IF;
  IF mmr_lambda IS NULL OR mmr_lambda = 'NaN'
     OR mmr_lambda < (bounds->>'min')::float8 OR mmr_lambda > (bounds->>'max')::float8 THEN
    RAISE EXCEPTION 'scirag.mmr_select: mmr_lambda must be between % and % (got %)', bounds->>'min', bounds->>'max', mmr_lambda
      USING ERRCODE = '22023';
  END IF;
  IF k IS NULL OR k < 1 OR cardinality(coalesce(chunk_ids, '{}')) = 0 THEN
    RETURN;
  END IF;
  -- Readable candidates, first occurrence of each id, in input order.
  SELECT array_agg(x.id ORDER BY x.pos), array_agg(x.rel ORDER BY x.pos)
  INTO ids, rel
  FROM (SELECT DISTINCT ON (u.id) u.id, u.rel, u.pos
        FROM unnest(chunk_ids, relevance) WITH ORDINALITY AS u(id, rel, pos)
        JOIN scirag.chunks c ON c.id = u.id
        ORDER BY u.id, u.pos) x;
  n := coalesce(cardinality(ids), 0);
  IF n = 0 THEN
    RETURN;
  END IF;
  -- Relevance to [0, 1] (a missing score counts as the lowest).
  SELECT min(v), max(v) INTO lo, hi FROM unnest(rel) AS v;
  rel := ARRAY(SELECT CASE WHEN hi IS NULL OR hi = lo THEN 1.0
                           ELSE (coalesce(v, lo) - lo) / (hi - lo) END
               FROM unnest(rel) WITH ORDINALITY AS t(v, o) ORDER BY o);
  -- Pairwise cosine similarity, row-major; a chunk without an embedding (a section)
  -- is taken as unlike everything.
  IF k > 1 AND n > 1 THEN
    SELECT array_agg(CASE WHEN a.embedding IS NULL OR b.embedding IS NULL THEN 0.0
                          ELSE 1.0 - (a.embedding OPERATOR(public.<=>) b.embedding) END
                     ORDER BY a.o, b.o)
    INTO sim
    FROM (SELECT t.o, c.embedding FROM unnest(ids) WITH ORDINALITY AS t(id, o) JOIN scirag.chunks c ON c.id = t.id) a
    CROSS JOIN (SELECT t.o, c.embedding FROM unnest(ids) WITH ORDINALITY AS t(id, o) JOIN scirag.chunks c ON c.id = t.id) b;
  END IF;
  picked := array_fill(false, ARRAY[n]);
  max_sim := array_fill(0.0::double precision, ARRAY[n]);
  WHILE r < least(k, n) LOOP
    best := NULL;
    FOR i IN 1..n LOOP
      CONTINUE WHEN picked[i];
      -- MMR = lambda * relevance - (1 - lambda) * (highest similarity to a picked chunk)
      sc := mmr_lambda * rel[i] - (1 - mmr_lambda) * CASE WHEN r = 0 THEN 0.0 ELSE max_sim[i] END;
      IF best IS NULL OR sc > best_score OR (sc = best_score AND rel[i] > rel[best]) THEN
        best := i;
        best_score := sc;
      END IF;
    END LOOP;
    picked[best] := true;
    r := r + 1;
    chunk_id := ids[best];
    rank := r;
    RETURN NEXT;
    IF sim IS NOT NULL THEN
      FOR j IN 1..n LOOP
        max_sim[j] := greatest(max_sim[j], sim[(j - 1) * n + best]);
      END LOOP;
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION scirag.mmr_select(bigint[], double precision[], int, double precision) IS
  'Maximal marginal relevance (VulcanLab step 5): picks k of the readable chunks greedily by mmr_lambda * relevance - (1 - mmr_lambda) * max cosine similarity to the chunks already picked. relevance (e.g. the fused score) is min-max normalised; similarity comes from the stored embeddings. mmr_lambda 1 = relevance order, 0 = diversity only; its default is the preset default (scirag.preset_defaults(), 0.7), its bounds those of retrieve''s mmr_lambda option (scirag.retrieve_option_schema()). Ties keep input order.';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API functions
-- run as scirag_api, which owns no table, so row-level security keyed on the caller
-- (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.mmr_select(bigint[], double precision[], int, double precision) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.mmr_select(bigint[], double precision[], int, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.mmr_select(bigint[], double precision[], int, double precision)
  TO scirag_reader, scirag_api, scirag_loader;
-- The safety net: the same settings for every listed API function (tests/pgtap/01_rls_sweep.sql).
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
