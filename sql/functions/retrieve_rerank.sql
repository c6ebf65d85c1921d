-- Deploy scirag:functions/retrieve_rerank
-- Split (issue 28): scirag.retrieve_rerank, moved out of functions/retrieve (sql/functions/retrieve.sql)
-- into a change of its own, unchanged (same body, comment, owner, security, privileges),
-- so that a later change to it copies this script only: after a tag,
-- `sqitch rework functions/retrieve_rerank` (docs/releasing.md, "One object per change").
BEGIN;

CREATE OR REPLACE FUNCTION scirag.retrieve_rerank(query text, candidates scirag.ranked_hit[], options jsonb,
                                                  OUT ranked scirag.ranked_hit[], OUT stage jsonb)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  ids bigint[];
  got_ids bigint[];
  status text;
  t0 timestamptz := clock_timestamp();
  e_state text;
  e_msg text;
BEGIN
  ranked := coalesce(candidates, '{}');
  IF cardinality(ranked) = 0 THEN
    RETURN;   -- nothing to rerank: no stage
  END IF;
  ids := ARRAY(SELECT c.chunk_id FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o) ORDER BY c.o);
  BEGIN
    SELECT array_agg(r.chunk_id ORDER BY r.score DESC, r.chunk_id), min(r.status)
      INTO got_ids, status
    FROM scirag.rerank(query, ids,
                       ARRAY(SELECT ch.content FROM unnest(ids) WITH ORDINALITY AS x(id, o)
                             JOIN scirag.chunks ch ON ch.id = x.id ORDER BY x.o),
                       coalesce(options, '{}') || jsonb_build_object('fused_scores',
                         to_jsonb(ARRAY(SELECT c.score FROM unnest(ranked) WITH ORDINALITY AS c(chunk_id, score, layers, o)
                                        ORDER BY c.o)))) r;
    -- A reranker that returns another set of chunks leaves the fused order as it was.
    IF got_ids IS NOT NULL AND cardinality(got_ids) = cardinality(ids) THEN
      ranked := ARRAY(SELECT c FROM unnest(ranked) AS c ORDER BY array_position(got_ids, c.chunk_id));
    END IF;
    stage := jsonb_build_object('stage', 'rerank', 'status', coalesce(status, 'empty'),
      'ms', round((extract(epoch FROM clock_timestamp() - t0) * 1000)::numeric, 2), 'candidates', cardinality(ranked));
  EXCEPTION
    WHEN query_canceled THEN
      RAISE;
    WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_msg = MESSAGE_TEXT;
      stage := scirag.trace_error('rerank', e_state, e_msg, query, extract(epoch FROM clock_timestamp() - t0) * 1000)
               || jsonb_build_object('candidates', cardinality(ranked));
  END;
END $$;
COMMENT ON FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) IS
  'Rerank stage: reorders a candidate list with scirag.rerank (options: retrieve''s rerank option), the fused scores passed along; chunk text read through row-level security. A reranker that fails (trace: error, its sqlstate and message) or returns another set leaves the order as it was; a cancel or statement timeout is raised. Empty input: no stage (stage NULL).';

-- Declared here as the reader wall leaves them (functions/reader_wall_apply): the API
-- functions run as scirag_api, which owns no table, so row-level security keyed on the
-- caller (scirag.scope_role()) still filters every row they read.
ALTER FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) OWNER TO scirag_api;
REVOKE ALL ON FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb) TO scirag_reader, scirag_loader;
COMMIT;
