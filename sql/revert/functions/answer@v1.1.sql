-- Revert scirag:functions/answer: the released version (functions/answer@v1.0) again
\ir ../../functions/answer@v1.0.sql
