-- Verify scirag:schema/document_metadata
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM pg_attribute WHERE attrelid = 'scirag.documents'::regclass
          AND attname IN ('arxiv_id', 'metadata_inferred') AND NOT attisdropped) = 2,
         'documents.arxiv_id or documents.metadata_inferred missing';
  ASSERT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'scirag.documents'::regclass
                 AND conname = 'documents_metadata_inferred_fields'),
         'documents_metadata_inferred_fields check missing';
END $$;
