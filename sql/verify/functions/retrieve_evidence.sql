-- Verify scirag:functions/retrieve_evidence
-- By name, not by signature: functions/retrieve_evidence_resolved gives it a fifth
-- argument, and every sqitch verify of a later database must still pass.
DO $$
DECLARE
  f oid := (SELECT p.oid FROM pg_proc p WHERE p.pronamespace = 'scirag'::regnamespace AND p.proname = 'retrieve_evidence');
BEGIN
  ASSERT f IS NOT NULL, 'scirag.retrieve_evidence: missing';
  ASSERT (SELECT NOT prosecdef AND proconfig @> ARRAY['search_path=pg_catalog, pg_temp'] FROM pg_proc WHERE oid = f),
         'scirag.retrieve_evidence: SECURITY INVOKER, pinned search_path';
  ASSERT has_function_privilege('scirag_api', f, 'EXECUTE'),
         'scirag.retrieve_evidence: scirag_api lacks EXECUTE';
  ASSERT NOT has_function_privilege('scirag_reader', f, 'EXECUTE'),
         'scirag.retrieve_evidence: readers may execute it (they use scirag.retrieve)';
  ASSERT NOT has_function_privilege('public', f, 'EXECUTE'),
         'scirag.retrieve_evidence: PUBLIC may execute it';
END $$;
