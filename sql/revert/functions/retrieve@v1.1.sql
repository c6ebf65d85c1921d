-- Revert scirag:functions/retrieve: the released version (functions/retrieve@v1.0) again, then
-- drop what the rework added (nothing released calls it)
\ir ../../functions/retrieve@v1.0.sql
DROP FUNCTION scirag.retrieve_config(text, int, jsonb), scirag.retrieve_option_schema();
