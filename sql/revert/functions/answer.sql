-- Revert scirag:functions/answer: the released version (functions/answer@v1.1) again, then
-- drop what the rework added (nothing released calls it)
\ir ../../functions/answer@v1.1.sql
DROP FUNCTION scirag.answer_generate(text, jsonb);
