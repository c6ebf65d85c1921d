-- Revert scirag:schema/query_adapter from pg: questions embedded without the adapter again
BEGIN;

DELETE FROM scirag.settings WHERE key = 'query_adapter';

COMMIT;
