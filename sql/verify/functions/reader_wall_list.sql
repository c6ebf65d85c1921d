-- Verify scirag:functions/reader_wall_list
DO $$
BEGIN
  ASSERT 'scope_documents' = ANY (scirag.reader_wall_functions()), 'scope_documents must be a listed reader API function';
END $$;
