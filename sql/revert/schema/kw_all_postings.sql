-- Revert scirag:schema/kw_all_postings
BEGIN;
DROP VIEW scirag.kw_all_postings;
COMMIT;
