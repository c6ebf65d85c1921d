-- Revert scirag:schema/retrieval_config
BEGIN;
DROP TABLE scirag.retrieval_profiles;
COMMIT;
