-- Revert scirag:functions/deep_text: the released version (functions/deep_text@v1.0) again, then
-- drop what the rework added (nothing released calls it)
\ir ../../functions/deep_text@v1.0.sql
DROP FUNCTION scirag.text_blocks(text);
