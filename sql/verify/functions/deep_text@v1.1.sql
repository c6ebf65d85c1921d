-- Verify scirag:functions/deep_text
DO $$
BEGIN
  ASSERT scirag.word_count('Straw | 1.2 t/ha — yields') = 4, 'word_count miscounts';
  ASSERT scirag.chunk_body(E'T\nA\n\nbody', 'T', 'T > A') = 'body', 'chunk_body does not strip the prefix';
  ASSERT scirag.locate_text(E'one two\nthree four', 'two three') = ARRAY[5, 14], 'locate_text misses a whitespace-variant match';
  ASSERT scirag.window_text('Alpha beta gamma. Delta epsilon zeta. Eta theta iota.', 19, 38, 6)
         = 'Alpha beta gamma. Delta epsilon zeta. […]', 'window_text does not keep the original span';
END $$;
-- functions/deep_text (issue 13 rework): linear text routines
DO $$
BEGIN
  ASSERT (SELECT count(*) FROM scirag.text_units(repeat('Corn grows well. ', 3000))) = 3000, 'text_units on a long paragraph';
  ASSERT array_to_string(scirag.text_blocks(repeat('é', 3000)), '') = repeat('é', 3000), 'text_blocks';
END $$;
