-- Revert scirag:functions/deep_text
BEGIN;
DROP FUNCTION scirag.window_text(text, int, int, int, text[]), scirag.text_units(text, text[]),
  scirag.locate_text(text, text, int), scirag.chunk_body(text, text, text), scirag.word_count(text);
COMMIT;
