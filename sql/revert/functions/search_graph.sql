-- Revert scirag:functions/search_graph: the released version (functions/search_graph@v1.1) again
\ir ../../functions/search_graph@v1.1.sql
