-- Revert scirag:schema/retrieval_types
-- layer_hit stays: functions/fuse_rrf@v1.1, still deployed below this change, created
-- it and its functions use it; that change's own revert drops it.
BEGIN;
DROP TYPE scirag.ranked_hit;
COMMIT;
