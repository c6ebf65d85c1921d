-- Revert scirag:functions/search_keyword: the released version (functions/search_keyword@v1.0) again
\ir ../../functions/search_keyword@v1.0.sql
