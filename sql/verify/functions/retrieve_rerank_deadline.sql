-- Verify scirag:functions/retrieve_rerank_deadline
DO $$
BEGIN
  ASSERT (SELECT pg_get_userbyid(proowner) = 'scirag_api' AND prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
                 AND prosrc ~ 'retrieve_rerank\(query, ranked,\s+CASE WHEN cfg \? ''deadline_ms'''
          FROM pg_proc WHERE oid = 'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb)'::regprocedure),
         'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb): owner scirag_api, SECURITY DEFINER, pinned search_path, the rerank stage given what the deadline leaves';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb)', 'EXECUTE'),
         'scirag.retrieve(text, int, text, jsonb, public.vector, jsonb): readers may hand in a resolved preset';
  ASSERT obj_description('scirag.rerank(text, bigint[], text[], jsonb)'::regprocedure, 'pg_proc') ~ 'deadline_ms',
         'scirag.rerank(text, bigint[], text[], jsonb): its comment names the deadline_ms option';
END $$;
