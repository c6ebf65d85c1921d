-- Revert scirag:functions/search_vector: the released version (functions/search_vector@v1.0) again
\ir ../../functions/search_vector@v1.0.sql
