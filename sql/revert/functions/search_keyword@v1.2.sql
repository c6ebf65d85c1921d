-- Revert scirag:functions/search_keyword: the released version (functions/search_keyword@v1.1) again
\ir ../../functions/search_keyword@v1.1.sql
