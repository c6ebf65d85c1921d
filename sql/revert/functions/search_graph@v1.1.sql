-- Revert scirag:functions/search_graph: the released version (functions/search_graph@v1.0) again
\ir ../../functions/search_graph@v1.0.sql
