-- Deploy scirag:schema/kw_blocks_packed
-- The BM25 scorer (scirag_helpers/bm25.py, called by search_keyword) sums term scores
-- over hundreds of thousands of postings per query at a million chunks. Unnesting the
-- arrays in SQL costs about 1 us a posting; PL/Python would convert each element to a
-- Python object. So each block also carries its postings as one binary string of
-- fixed 14-byte records (chunk id int8, tf int2, length int4; big-endian, as int8send
-- and friends write them), which numpy reads in place with one structured dtype.
-- Stored uncompressed (STORAGE PLAIN, a block of 128 takes 1.8 KB and fits in a page),
-- so reading it decompresses nothing. The column is generated: every writer of
-- kw_blocks (kw_flush, kw_compact, kw_rebuild, gc) keeps it right unchanged.
BEGIN;
CREATE FUNCTION scirag.kw_pack(chunk_ids bigint[], tfs smallint[], dls int[])
RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT string_agg(int8send(x.id) || int2send(x.tf) || int4send(x.dl), ''::bytea ORDER BY x.i)
        FROM unnest(chunk_ids, tfs, dls) WITH ORDINALITY AS x(id, tf, dl, i));
COMMENT ON FUNCTION scirag.kw_pack(bigint[], smallint[], int[]) IS
  'The postings of a kw_blocks row as 14-byte big-endian records (chunk id int8, tf int2, length int4), in block order; read by scirag_helpers/bm25.py';
REVOKE ALL ON FUNCTION scirag.kw_pack(bigint[], smallint[], int[]) FROM PUBLIC;
-- (whoever writes kw_blocks computes the generated column)
GRANT EXECUTE ON FUNCTION scirag.kw_pack(bigint[], smallint[], int[]) TO scirag_loader, scirag_owner;

-- (one statement: the storage applies to the values the table rewrite computes)
ALTER TABLE scirag.kw_blocks
  ADD COLUMN packed bytea GENERATED ALWAYS AS (scirag.kw_pack(chunk_ids, tfs, dls)) STORED,
  ALTER COLUMN packed SET STORAGE PLAIN;
COMMENT ON COLUMN scirag.kw_blocks.packed IS
  'chunk_ids, tfs and dls as 14-byte records (scirag.kw_pack), generated, uncompressed; what the keyword scorer reads';
COMMIT;
