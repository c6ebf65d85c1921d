-- Revert scirag:policies/function_privileges
-- Nothing to undo on purpose: before this change `scirag db init` revoked the same
-- privilege after every deploy, so the state a revert returns to has PUBLIC without
-- EXECUTE too. Granting it back would open every scirag function to every login.
BEGIN;
COMMIT;
