-- Revert scirag:functions/scope (back to functions/scope@v1.3: no positive filters in scope_is_empty and current_scope)
\ir ../../functions/scope@v1.3.sql
BEGIN;
DO $$ BEGIN PERFORM scirag.apply_reader_wall(); END $$;
COMMIT;
