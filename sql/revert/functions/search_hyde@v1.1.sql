-- Revert scirag:functions/search_hyde
BEGIN;
DROP FUNCTION scirag.search_hyde(text, int), scirag.hyde_passage(text);
DELETE FROM scirag.settings WHERE key = 'hyde_styles';
COMMIT;
