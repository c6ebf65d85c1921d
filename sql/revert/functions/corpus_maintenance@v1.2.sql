-- Revert scirag:functions/corpus_maintenance: the released insert trigger function
-- (functions/corpus_maintenance@v1.1, repeated here: including that script would run its
-- one-time trigger changes again) and no kw_flush
BEGIN;
CREATE OR REPLACE FUNCTION scirag.kw_index_new_chunks()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Section chunks repeat their children's text: only prose and table chunks are indexed.
  INSERT INTO scirag.kw_postings (lexeme, chunk_id, document_id, license, source, retracted, tf, dl)
  SELECT u.lexeme, n.id, n.document_id, n.license, n.source, n.retracted,
         coalesce(cardinality(u.positions), 1),
         sum(coalesce(cardinality(u.positions), 1)) OVER (PARTITION BY n.id)
  FROM new_chunks n, unnest(n.tsv) AS u
  WHERE n.kind <> 'section';
  PERFORM scirag.kw_stats_apply(array_agg(n.tsv), array_agg(n.license), array_agg(n.source), 1)
  FROM new_chunks n WHERE n.kind <> 'section' AND n.tsv IS NOT NULL
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION scirag.kw_index_new_chunks() IS 'Statement trigger: adds BM25 postings and statistics for inserted chunks';
DROP FUNCTION scirag.kw_flush();
COMMIT;
