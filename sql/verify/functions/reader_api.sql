-- Verify scirag:functions/reader_api
DO $$
BEGIN
  ASSERT to_regprocedure('scirag.documents_visible(text)') IS NOT NULL, 'documents_visible missing';
  ASSERT to_regprocedure('scirag.chunk_get(bigint)') IS NOT NULL, 'chunk_get missing';
  ASSERT to_regprocedure('scirag.chunk_neighbours(bigint, int)') IS NOT NULL, 'chunk_neighbours missing';
  ASSERT to_regprocedure('scirag.document_outline(bigint)') IS NOT NULL, 'document_outline missing';
  ASSERT to_regprocedure('scirag.entities_visible(bigint[])') IS NOT NULL, 'entities_visible missing';
  ASSERT to_regprocedure('scirag.documents_all_visible(bigint[])') IS NOT NULL, 'documents_all_visible missing';
  ASSERT to_regprocedure('scirag.external_ids_all_visible(text[])') IS NOT NULL, 'external_ids_all_visible missing';
  ASSERT NOT EXISTS (SELECT 1 FROM pg_proc p, unnest(p.proargnames) AS a
                     WHERE p.oid = 'scirag.documents_visible(text)'::regprocedure AND a = 'source_path'),
         'documents_visible must not show source_path';
END $$;
DO $$
BEGIN
  -- issue 26: the document's row is checked before its chunks are read
  ASSERT (SELECT prosrc FROM pg_proc WHERE oid = 'scirag.document_outline(bigint)'::regprocedure)
           LIKE '%EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = document_outline.id)%',
         'document_outline is the @v1.3 version (it walks a hidden document''s chunks)';
END $$;
