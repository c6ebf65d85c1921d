-- Verify scirag:functions/document_admin
DO $$
BEGIN
  ASSERT scirag.document_ref('no such document, surely', 'verify') IS NULL, 'document_ref found a ghost';
  ASSERT scirag.document_delete('no such document, surely') IS NULL, 'document_delete deleted a ghost';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.document_delete(text)', 'EXECUTE'),
    'a reader may delete documents';
  ASSERT NOT has_function_privilege('scirag_reader', 'scirag.document_set(text, jsonb)', 'EXECUTE'),
    'a reader may change metadata';
  ASSERT has_function_privilege('scirag_loader', 'scirag.document_delete(text)', 'EXECUTE'),
    'the loader may not delete documents';
  BEGIN
    PERFORM scirag.document_set('x', '{"colour": "red"}');
    RAISE EXCEPTION 'document_set accepted an unknown field';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
