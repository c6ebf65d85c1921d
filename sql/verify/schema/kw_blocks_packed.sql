-- Verify scirag:schema/kw_blocks_packed
DO $$
BEGIN
  ASSERT (SELECT attgenerated = 's' FROM pg_attribute
          WHERE attrelid = 'scirag.kw_blocks'::regclass AND attname = 'packed'),
         'scirag.kw_blocks.packed must be a stored generated column';
  -- the layout bm25.py decodes: (length, value) per element, ids then tfs then lengths
  ASSERT scirag.kw_pack('{7}', '{2}', '{30}') =
         '\x000000080000000000000007000000020002000000040000001e'::bytea,
         'scirag.kw_pack no longer writes the binary array layout bm25.py reads';
END $$;
