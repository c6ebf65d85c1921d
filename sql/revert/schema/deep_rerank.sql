-- Revert scirag:schema/deep_rerank from pg: the "builtin" model setting gone (an admin's own value stays)
BEGIN;

DELETE FROM scirag.settings WHERE key = 'reranker_model_path' AND value = 'builtin';

COMMIT;
