-- Verify scirag:schema/chunk_body on pg
DO $$
BEGIN
  ASSERT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'scirag.chunks'::regclass
                 AND attname = 'body' AND attnotnull AND NOT attisdropped),
         'chunks.body missing or nullable';
  ASSERT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'scirag.chunks'::regclass
                 AND tgname = 'chunks_fill_body' AND NOT tgisinternal),
         'trigger chunks_fill_body missing';
END $$;
