-- Revert scirag:functions/retrieve
BEGIN;
DROP FUNCTION scirag.retrieve(text, int, text, jsonb, public.vector), scirag.last_trace(),
  scirag.citation(scirag.documents, scirag.chunks), scirag.breadcrumb(text, text);
COMMIT;
