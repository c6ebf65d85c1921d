-- Verify scirag:schema/crossref_citations
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'scirag.document_citations'::regclass
                 AND attname = 'origin' AND NOT attisdropped), 'document_citations.origin missing';
  ASSERT NOT (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'scirag.document_citations'::regclass
              AND attname = 'chunk_id'), 'document_citations.chunk_id still NOT NULL';
  ASSERT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
                 WHERE t.tgrelid = 'scirag.document_citations'::regclass AND t.tgname = 'document_citations_fill_scope'
                   AND p.proname = 'document_citations_fill_scope'), 'document_citations_fill_scope trigger not replaced';
  ASSERT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'document_citations_document_fk'),
         'document_citations_document_fk missing';
  ASSERT to_regclass('scirag.documents_doi_lower') IS NOT NULL, 'documents_doi_lower index missing';
END $$;
