-- Revert scirag:schema/roles
-- Roles are cluster-wide: another scirag database (an evaluation corpus) may still
-- use them, in which case they stay.
BEGIN;
DO $$
DECLARE r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['scirag_reader', 'scirag_loader', 'scirag_owner'] LOOP
    BEGIN
      EXECUTE format('DROP ROLE IF EXISTS %I', r);
    EXCEPTION WHEN dependent_objects_still_exist THEN
      RAISE NOTICE 'role % is still used by another database; kept', r;
    END;
  END LOOP;
END $$;
COMMIT;
