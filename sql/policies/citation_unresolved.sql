-- Deploy scirag:policies/citation_unresolved
-- A citation to a hidden document must look exactly like a citation to a document
-- that is not in the corpus (issue 26): the row stays visible whenever its citing
-- document is, and the reader API (scirag.references, reworked with this change)
-- shows the target as unresolved because the join with documents, under row-level
-- security, finds nothing. Before, the policy dropped the whole row, so a visible
-- document citing a hidden one lost that DOI from its reference list: the missing
-- DOI told the hidden document apart from an absent one. Readers hold no privilege
-- on document_citations (policies/reader_wall); every reader function that reads
-- cited_document_id joins it with documents or chunks under row-level security.
BEGIN;
DROP POLICY scope_read ON scirag.document_citations;
DO $$
BEGIN
  EXECUTE format('CREATE POLICY scope_read ON scirag.document_citations FOR SELECT TO PUBLIC USING (%s)',
                 scirag.scope_predicate('document_id', true));
END $$;
COMMIT;
