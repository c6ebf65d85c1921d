-- Revert scirag:functions/embed (back to functions/embed@v1.1)
\ir ../../functions/embed@v1.1.sql
