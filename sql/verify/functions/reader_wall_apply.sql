-- Verify scirag:functions/reader_wall_apply
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.apply_reader_wall()') IS NOT NULL, 'scirag.apply_reader_wall() is missing';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.apply_reader_wall()', 'EXECUTE'),
         'readers must not run scirag.apply_reader_wall()';
END $$;
