-- Revert scirag:functions/retrieve_resolved: scirag.retrieve as functions/retrieve_main
-- defines it (checking the question and resolving a preset itself), and no six-argument
-- signature.
\ir ../../functions/retrieve_main.sql
BEGIN;
DROP FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector, jsonb);
COMMIT;
