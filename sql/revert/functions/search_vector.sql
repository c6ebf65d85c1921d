-- Revert scirag:functions/search_vector: the released version (functions/search_vector@v1.1) again
\ir ../../functions/search_vector@v1.1.sql
