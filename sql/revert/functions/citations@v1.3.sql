-- Revert scirag:functions/citations (back to functions/citations@v1.1)
\ir ../../functions/citations@v1.1.sql
