-- Revert scirag:functions/mmr: back to functions/mmr@v1.3 (its script ends with the reader wall)
\ir ../../functions/mmr@v1.3.sql
