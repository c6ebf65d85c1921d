-- Revert scirag:functions/intent: the previous version.
\ir ../../functions/intent@v1.1.sql
