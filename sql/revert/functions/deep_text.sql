-- Revert scirag:functions/deep_text: the previous version.
\ir ../../functions/deep_text@v1.1.sql
