-- Deploy scirag:functions/check_limit
-- The one bound on a size argument (n, depth, k) of a function a reader may call on
-- its own (issue 13): the layers (search_graph, search_community, search_hyde, ...)
-- are reachable directly, not only through retrieve, whose options retrieve_config
-- bounds; they check here, so the limit and the error read the same everywhere.
BEGIN;

CREATE OR REPLACE FUNCTION scirag.check_limit(value int, name text, caller text DEFAULT 'scirag', hi int DEFAULT 1000)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- Only the upper end is refused: NULL, 0 and negative sizes already mean "nothing"
  -- to every layer (they return no rows), which callers rely on.
  IF value > hi THEN
    RAISE EXCEPTION '%: % must be at most % (got %)', caller, name, hi, value
      USING ERRCODE = '22023', HINT = format('pass %s between 1 and %s', name, hi);
  END IF;
END $$;
COMMENT ON FUNCTION scirag.check_limit(int, text, text, int) IS
  'Raises SQLSTATE 22023 ("<caller>: <name> must be at most <hi> (got N)") when a size argument (n, depth, k) exceeds hi (default 1000); NULL, 0 and negative values pass (a layer returns nothing for them). The one size bound of every layer called on its own.';
REVOKE ALL ON FUNCTION scirag.check_limit(int, text, text, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.check_limit(int, text, text, int) TO scirag_reader, scirag_loader;
COMMIT;
