-- Verify scirag:functions/deep_text
-- (text_units and window_text are not called here: text_units is PL/Python, which
-- needs scirag.settings.python_path, written by `scirag db init` after the deploy;
-- tests/pgtap/deep_text.sql and tests/py/test_deep_text.py exercise them.)
DO $$
BEGIN
  ASSERT scirag.word_count('Straw | 1.2 t/ha — yields') = 4, 'word_count miscounts';
  ASSERT scirag.chunk_body(E'T\nA\n\nbody', 'T', 'T > A') = 'body', 'chunk_body does not strip the prefix';
  ASSERT scirag.locate_text(E'one two\nthree four', 'two three') = ARRAY[5, 14], 'locate_text misses a whitespace-variant match';
  ASSERT array_to_string(scirag.text_blocks(repeat('é', 3000)), '') = repeat('é', 3000), 'text_blocks';
  ASSERT (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
           WHERE p.oid = 'scirag.text_units(text, text[])'::regprocedure) = 'plpython3u',
         'text_units is not the PL/Python wrapper of scirag_helpers.text';
  -- the length bound is checked before any Python import
  BEGIN
    PERFORM scirag.text_units(repeat('a', 2000001));
    RAISE EXCEPTION 'text_units accepted a body over 2000000 characters' USING ERRCODE = 'P0004';
  EXCEPTION WHEN invalid_parameter_value THEN NULL;
  END;
END $$;
