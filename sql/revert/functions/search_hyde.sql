-- Revert scirag:functions/search_hyde: the released version (functions/search_hyde@v1.1) again
\ir ../../functions/search_hyde@v1.1.sql
