-- Revert scirag:functions/rerank: the previous version.
\ir ../../functions/rerank@v1.1.sql
