-- Revert scirag:functions/fuse_rrf
BEGIN;
DROP FUNCTION scirag.fuse_scores(scirag.layer_hit[], jsonb), scirag.fuse_rrf(scirag.layer_hit[], jsonb, int), scirag.default_rrf_weights();
DROP TYPE scirag.layer_hit;
COMMIT;
