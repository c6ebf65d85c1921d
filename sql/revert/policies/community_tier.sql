-- Revert scirag:policies/community_tier: the policy of policies/graph_rls again
BEGIN;
DROP POLICY scope_read ON scirag.kg_communities;
CREATE POLICY scope_read ON scirag.kg_communities FOR SELECT TO PUBLIC USING (
  licenses <@ ((SELECT scirag.scope_licenses())::text[])
  AND ((SELECT scirag.scope_sources()) IS NULL OR sources <@ ((SELECT scirag.scope_sources())::text[]))
  AND NOT (source_documents && ((SELECT scirag.scope_excluded_documents())::bigint[]))
  AND NOT (any_retracted AND (SELECT scirag.scope_exclude_retracted())));
COMMIT;
