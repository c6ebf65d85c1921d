-- Revert scirag:schema/keyword_index
BEGIN;
DROP TABLE scirag.kw_class_stats, scirag.kw_term_stats, scirag.kw_postings;
COMMIT;
