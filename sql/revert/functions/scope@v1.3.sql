-- Revert scirag:functions/scope (back to functions/scope@v1.1: the ceiling follows current_user)
\ir ../../functions/scope@v1.1.sql
DROP FUNCTION scirag.scope_role();
