-- Deploy scirag:schema/plain_names
-- No unexplained names in what users read (issue 25): the catalog comments \d+ and
-- \df+ show, and the preset description `scirag preset list` prints, named the design
-- document the stages came from ("VulcanLab"), which is not part of this repository.
-- They now say what the thing is.
BEGIN;

UPDATE scirag.presets
SET description = 'the defaults of every retrieval, consolidation and augmentation key; every optional stage (enrichment, reranking, intent bias, MMR, consolidation) off until an ablation earns it'
WHERE name = 'default' AND description LIKE 'VulcanLab defaults%';

DO $$
DECLARE
  r record;
  plain text;
BEGIN
  FOR r IN SELECT d.classoid, d.objoid, d.objsubid, d.description FROM pg_description d
           JOIN pg_namespace n ON n.nspname = 'scirag'
           WHERE d.description LIKE '%VulcanLab%'
             AND ((d.classoid = 'pg_proc'::regclass AND (SELECT pronamespace FROM pg_proc WHERE oid = d.objoid) = n.oid)
               OR (d.classoid = 'pg_class'::regclass AND (SELECT relnamespace FROM pg_class WHERE oid = d.objoid) = n.oid))
  LOOP
    plain := regexp_replace(r.description, ' \(VulcanLab (presets|step \d|stage \d)\)', '', 'g');
    plain := replace(plain, 'VulcanLab augmentation: ', '');
    plain := replace(plain, 'VulcanLab''s ', 'the ');
    plain := replace(plain, 'VulcanLab', 'the staged pipeline');
    IF r.classoid = 'pg_proc'::regclass THEN
      EXECUTE format('COMMENT ON FUNCTION %s IS %L', r.objoid::regprocedure, plain);
    ELSIF r.objsubid = 0 THEN
      EXECUTE format('COMMENT ON TABLE %s IS %L', r.objoid::regclass, plain);
    ELSE
      EXECUTE format('COMMENT ON COLUMN %s.%I IS %L', r.objoid::regclass,
                     (SELECT attname FROM pg_attribute WHERE attrelid = r.objoid AND attnum = r.objsubid), plain);
    END IF;
  END LOOP;
END $$;
COMMIT;
