-- Verify scirag:policies/function_privileges
DO $$
DECLARE
  open_to_public text;
BEGIN
  SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text) INTO open_to_public
  FROM pg_proc p
  WHERE p.pronamespace = 'scirag'::regnamespace AND has_function_privilege('public', p.oid, 'EXECUTE');
  ASSERT open_to_public IS NULL,
    format('PUBLIC may execute scirag function(s): %s (REVOKE ALL ON FUNCTION ... FROM PUBLIC where they are defined)', open_to_public);
END $$;
