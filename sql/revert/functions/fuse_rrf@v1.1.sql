-- Revert scirag:functions/fuse_rrf
BEGIN;
DROP FUNCTION scirag.fuse_scores(scirag.layer_hit[], jsonb, text), scirag.fuse_rrf(scirag.layer_hit[], jsonb, int), scirag.default_rrf_weights(), scirag.default_score_weights();
DROP TYPE scirag.layer_hit;
COMMIT;
