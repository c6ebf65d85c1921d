-- Revert scirag:schema/campaign_embeddings
BEGIN;
DROP TABLE scirag.campaign_record_embeddings;
DROP FUNCTION scirag.campaign_embedding_check();
ALTER TABLE scirag.campaigns DROP COLUMN screen_minilm;
COMMIT;
