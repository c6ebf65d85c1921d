-- Revert scirag:schema/campaign_eligibility
BEGIN;
DROP VIEW scirag.campaign_current_eligibility;
DROP TABLE scirag.eligibility_decisions;
DROP FUNCTION scirag.eligibility_decision_check();
COMMIT;
