-- Revert scirag:functions/retrieve: the released version (functions/retrieve@v1.1) again, then
-- drop what the rework added (nothing released calls it)
\ir ../../functions/retrieve@v1.1.sql
DROP FUNCTION scirag.retrieve_rows(scirag.ranked_hit[], int), scirag.retrieve_mmr(scirag.ranked_hit[], int, double precision),
  scirag.retrieve_rerank(text, scirag.ranked_hit[], jsonb), scirag.retrieve_fuse(scirag.layer_hit[], jsonb),
  scirag.retrieve_layers(text, jsonb, public.vector, timestamptz), scirag.trace_error(text, text, text, text, double precision),
  scirag.retrieve_config_check(jsonb);
