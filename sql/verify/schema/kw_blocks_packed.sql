-- Verify scirag:schema/kw_blocks_packed
DO $$
BEGIN
  ASSERT (SELECT attgenerated = 's' FROM pg_attribute
          WHERE attrelid = 'scirag.kw_blocks'::regclass AND attname = 'packed'),
         'scirag.kw_blocks.packed must be a stored generated column';
  -- the layout bm25.py decodes: per posting, id (8 bytes), tf (2), length (4), big-endian
  ASSERT scirag.kw_pack('{7}', '{2}', '{30}') =
         '\x000000000000000700020000001e'::bytea,
         'scirag.kw_pack no longer writes the 14-byte records bm25.py reads';
END $$;
