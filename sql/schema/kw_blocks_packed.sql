-- Deploy scirag:schema/kw_blocks_packed
-- The BM25 scorer (scirag_helpers/bm25.py, called by search_keyword) sums term scores
-- over hundreds of thousands of postings per query at a million chunks. Unnesting the
-- arrays in SQL costs about 1 us a posting; PL/Python would convert each element to a
-- Python object. So each block also carries its three arrays in PostgreSQL's binary
-- array format without the 20-byte array headers (array_send writes a 4-byte length and
-- the big-endian value per element): ids, then tfs, then lengths, 26 bytes a posting,
-- which numpy reads in place. Stored uncompressed (STORAGE PLAIN, a block fits in a
-- page), so cutting the three runs out in SQL copies bytes and decompresses nothing.
-- The column is generated: every writer of kw_blocks (kw_flush, kw_compact,
-- kw_rebuild, gc) keeps it right unchanged.
BEGIN;
CREATE FUNCTION scirag.kw_pack(chunk_ids bigint[], tfs smallint[], dls int[])
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
-- (array_send is STABLE only because an element type's send function could be; the
-- send functions of int8, int2 and int4 are immutable, so this is too)
RETURN substr(array_send(chunk_ids), 21) || substr(array_send(tfs), 21) || substr(array_send(dls), 21);
COMMENT ON FUNCTION scirag.kw_pack(bigint[], smallint[], int[]) IS
  'The three posting arrays of a kw_blocks row in binary array format (array_send) without their headers, concatenated: per posting 12 bytes of id, then 6 of tf, then 8 of length (each a 4-byte length and the big-endian value); read by scirag_helpers/bm25.py';
REVOKE ALL ON FUNCTION scirag.kw_pack(bigint[], smallint[], int[]) FROM PUBLIC;
-- (whoever writes kw_blocks computes the generated column)
GRANT EXECUTE ON FUNCTION scirag.kw_pack(bigint[], smallint[], int[]) TO scirag_loader, scirag_owner;

ALTER TABLE scirag.kw_blocks
  ADD COLUMN packed bytea GENERATED ALWAYS AS (scirag.kw_pack(chunk_ids, tfs, dls)) STORED;
ALTER TABLE scirag.kw_blocks ALTER COLUMN packed SET STORAGE PLAIN;
COMMENT ON COLUMN scirag.kw_blocks.packed IS
  'chunk_ids, tfs and dls in binary array format without headers (scirag.kw_pack), generated, uncompressed; what the keyword scorer reads';
COMMIT;
