-- Revert scirag:functions/rerank: the released version (functions/rerank@v1.0) again
\ir ../../functions/rerank@v1.0.sql
