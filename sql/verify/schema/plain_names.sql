-- Verify scirag:schema/plain_names
DO $$
BEGIN
  ASSERT NOT EXISTS (SELECT 1 FROM scirag.presets WHERE description LIKE '%VulcanLab%'),
    'a preset description names VulcanLab';
  ASSERT NOT EXISTS (SELECT 1 FROM pg_description WHERE description LIKE '%VulcanLab%'
                     AND ((classoid = 'pg_proc'::regclass
                           AND (SELECT pronamespace FROM pg_proc WHERE oid = objoid) = 'scirag'::regnamespace)
                       OR (classoid = 'pg_class'::regclass
                           AND (SELECT relnamespace FROM pg_class WHERE oid = objoid) = 'scirag'::regnamespace))),
    'a scirag catalog comment names VulcanLab';
END $$;
