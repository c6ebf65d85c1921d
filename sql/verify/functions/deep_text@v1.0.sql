-- Verify scirag:functions/deep_text
DO $$
BEGIN
  ASSERT scirag.word_count('Straw | 1.2 t/ha — yields') = 4, 'word_count miscounts';
  ASSERT scirag.chunk_body(E'T\nA\n\nbody', 'T', 'T > A') = 'body', 'chunk_body does not strip the prefix';
  ASSERT scirag.locate_text(E'one two\nthree four', 'two three') = ARRAY[5, 14], 'locate_text misses a whitespace-variant match';
  ASSERT scirag.window_text('Alpha beta gamma. Delta epsilon zeta. Eta theta iota.', 19, 38, 6)
         = 'Alpha beta gamma. Delta epsilon zeta. […]', 'window_text does not keep the original span';
END $$;
