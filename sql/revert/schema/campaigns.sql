-- Revert scirag:schema/campaigns
BEGIN;
DROP VIEW scirag.campaign_current_decisions;
DROP TABLE scirag.campaign_downloads, scirag.oa_resolutions, scirag.screening_decisions,
           scirag.campaign_records, scirag.campaign_pages, scirag.campaign_queries, scirag.campaigns;
DROP FUNCTION scirag.screening_decision_check();
DROP FUNCTION scirag.campaign_append_only();
COMMIT;
