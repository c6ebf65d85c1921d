-- Verify scirag:functions/corpus_maintenance
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.kw_flush()') IS NOT NULL, 'kw_flush missing';
  ASSERT to_regprocedure('scirag.kw_compact(int)') IS NOT NULL, 'kw_compact missing';
  ASSERT to_regprocedure('scirag.kw_rebuild(int)') IS NOT NULL, 'kw_rebuild missing';
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.kw_index_new_chunks()'::regprocedure) LIKE '%kw_flush%',
         'the chunk insert trigger must file fresh postings into blocks (kw_flush)';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.kw_flush()', 'EXECUTE'), 'readers must not run kw_flush';
  -- the reworked flush: no subquery over the merged blocks run once per posting
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.kw_flush()'::regprocedure) LIKE '%WHEN l.merge THEN l.blk ELSE l.blk + 1 END%',
         'kw_flush is the @v1.2 version (a subquery per posting over the merged blocks: quadratic)';
  -- the reworked removal looks deleted ids up in a hash, planned with them as a constant
  ASSERT 'plan_cache_mode=force_custom_plan' = ANY ((SELECT proconfig FROM pg_proc
           WHERE oid = 'scirag.kw_blocks_remove(bigint[], tsvector[], scirag.license_class[], text[])'::regprocedure)::text[]),
         'kw_blocks_remove is the @v1.1 version (chunk_ids && ids: every deleted id against every posting)';
END $$;
