-- Verify scirag:functions/retrieve_evidence_resolved
DO $$
BEGIN
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp']
          FROM pg_proc WHERE oid = 'scirag.retrieve_evidence(text, int, text, jsonb, jsonb)'::regprocedure),
         'scirag.retrieve_evidence: SECURITY INVOKER, pinned search_path';
  ASSERT to_regprocedure('scirag.retrieve_evidence(text, int, text, jsonb)') IS NULL,
         'scirag.retrieve_evidence(text, int, text, jsonb): the four-argument signature is still there';
  ASSERT has_function_privilege('scirag_api', 'scirag.retrieve_evidence(text, int, text, jsonb, jsonb)', 'EXECUTE'),
         'scirag.retrieve_evidence: scirag_api lacks EXECUTE';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.retrieve_evidence(text, int, text, jsonb, jsonb)', 'EXECUTE'),
         'scirag.retrieve_evidence: readers may execute it (they use scirag.retrieve)';
  ASSERT NOT has_function_privilege('public', 'scirag.retrieve_evidence(text, int, text, jsonb, jsonb)', 'EXECUTE'),
         'scirag.retrieve_evidence: PUBLIC may execute it';
END $$;
