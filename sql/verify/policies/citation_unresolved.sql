-- Verify scirag:policies/citation_unresolved
DO $$
BEGIN
  ASSERT (SELECT qual FROM pg_policies WHERE schemaname = 'scirag' AND tablename = 'document_citations'
          AND policyname = 'scope_read') NOT LIKE '%cited_document_id%',
         'document_citations.scope_read must not drop a citation whose target is hidden';
END $$;
