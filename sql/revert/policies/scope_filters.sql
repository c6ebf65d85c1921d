-- Revert scirag:policies/scope_filters
BEGIN;
DROP POLICY scope_filter ON scirag.chunks;
DROP POLICY scope_filter ON scirag.kw_postings;
DROP POLICY scope_filter ON scirag.kg_mentions;
DROP POLICY scope_filter ON scirag.kg_relationships;
DROP POLICY scope_filter ON scirag.document_citations;
DROP POLICY scope_filter ON scirag.kg_community_chunks;
DROP POLICY scope_filter ON scirag.kg_communities;
COMMIT;
