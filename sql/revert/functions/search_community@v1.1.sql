-- Revert scirag:functions/search_community: the released version (functions/search_community@v1.0) again
\ir ../../functions/search_community@v1.0.sql
