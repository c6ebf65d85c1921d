-- Revert scirag:functions/consolidate
BEGIN;
DROP FUNCTION scirag.consolidate(bigint[], jsonb), scirag.consolidation_groups(bigint[], jsonb),
  scirag.consolidation_render(scirag.consolidation_group, boolean), scirag.join_overlapping(text, text), scirag.covered_length(text, text[]),
  scirag.section_chain(bigint, int), scirag.consolidation_config(jsonb);
DROP TYPE scirag.consolidation_group;
COMMIT;
