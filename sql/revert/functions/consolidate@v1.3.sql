-- Revert scirag:functions/consolidate: the released version (functions/consolidate@v1.1)
-- again. That script also creates the type scirag.consolidation_group, which the rework
-- kept, so the type goes first together with the two functions whose signatures use it
-- (nothing else does); the released script then re-creates all of them, in one
-- transaction with the drops (its own BEGIN only warns that one is open).
BEGIN;
DROP FUNCTION scirag.consolidation_render(scirag.consolidation_group, boolean),
  scirag.consolidation_groups(bigint[], jsonb);
DROP TYPE scirag.consolidation_group;
\ir ../../functions/consolidate@v1.1.sql
