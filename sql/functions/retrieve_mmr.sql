-- Deploy scirag:functions/retrieve_mmr
-- Split (issue 28): scirag.retrieve_mmr, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_mmr` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_mmr(candidates scirag.ranked_hit[], k int, mmr_lambda double precision,
                                               OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  got_ids bigint[];
  n int := cardinality(coalesce(candidates, '{}'));
  t0 timestamptz := clock_timestamp();
  e_state text;
  e_msg text;
BEGIN
  ranked := coalesce(candidates, '{}');
  IF n <= k THEN
    RETURN;   -- nothing to choose between: no stage
  END IF;
  BEGIN
    -- relevance = list position (the fused or reranked order), highest first
    IF mmr_lambda IS NULL THEN
      got_ids := ARRAY(SELECT m.chunk_id FROM scirag.mmr_select(
                         ARRAY(SELECT c.chunk_id FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o) ORDER BY c.o),
                         ARRAY(SELECT n - o + 1.0 FROM generate_series(1, n) AS o), k) m ORDER BY m.rank);
    ELSE
      got_ids := ARRAY(SELECT m.chunk_id FROM scirag.mmr_select(
                         ARRAY(SELECT c.chunk_id FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o) ORDER BY c.o),
                         ARRAY(SELECT n - o + 1.0 FROM generate_series(1, n) AS o), k, mmr_lambda) m ORDER BY m.rank);
    END IF;
    ranked := ARRAY(SELECT c FROM unnest(ranked) AS c WHERE c.chunk_id = ANY (got_ids)
                    ORDER BY array_position(got_ids, c.chunk_id));
    stage := jsonb_build_object('stage', 'mmr', 'status', 'ok',
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', cardinality(ranked));
  EXCEPTION
    WHEN query_canceled THEN
      RAISE;
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
      stage := scirag.trace_error('mmr', e_state, e_msg, NULL, extract(epoch FROM clock_timestamp() - t0) * 1000)
               || jsonb_build_object('candidates', cardinality(ranked));
  END;
END $$;
COMMENT ON FUNCTION scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision) IS
  'MMR stage: k diverse chunks out of a longer candidate list (scirag.mmr_select; relevance = list position; mmr_lambda NULL = mmr_select''s own default), in MMR order. A failure (trace: error, sqlstate, message) leaves the list as it was; a cancel or statement timeout is raised. At most k candidates: no stage (stage NULL).';

REVOKE ALL ON FUNCTION scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision) TO scirag_reader, scirag_api, scirag_loader;
COMMIT;
