-- Deploy scirag:policies/community_tier
-- A community is grouped by label propagation over every edge of its license tier
-- (python/loader/scirag/graph/communities.py): which entities end up together
-- depends on the whole tier's evidence, not only on the community's own source
-- documents. So a community is visible only when the caller may see every
-- license class of its tier (tier_licenses) as well as every source document
-- (issue 13: a tier-4 community with public sources was shaped by restricted
-- edges and shown to public readers). The rest of the rule is policies/graph_rls's.
BEGIN;

DROP POLICY scope_read ON scirag.kg_communities;
CREATE POLICY scope_read ON scirag.kg_communities FOR SELECT TO PUBLIC USING (
  tier_licenses <@ ((SELECT scirag.scope_licenses())::text[])
  AND licenses <@ ((SELECT scirag.scope_licenses())::text[])
  AND ((SELECT scirag.scope_sources()) IS NULL OR sources <@ ((SELECT scirag.scope_sources())::text[]))
  AND NOT (source_documents && ((SELECT scirag.scope_excluded_documents())::bigint[]))
  AND NOT (any_retracted AND (SELECT scirag.scope_exclude_retracted())));
COMMENT ON POLICY scope_read ON scirag.kg_communities IS
  'Visible when the caller may see every license class of the community''s tier (its grouping used that tier''s edges) and every one of its source documents (licenses, sources, exclusions, retraction).';
COMMIT;
