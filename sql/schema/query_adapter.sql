-- Deploy scirag:schema/query_adapter to pg
-- requires: schema/core
-- requires: functions/embed
-- The query adapter (issue 23): a question's embedding is mapped by a 384 x 384 matrix
-- trained on QASPER's train split (scripts/train_query_adapter.py; the file ships in
-- scirag_helpers/models/query_adapter) before the vector search. It was trained to rank
-- the chunks of the question's own paper, so by default ("scoped") it applies only when
-- the caller narrowed the search to chosen documents (scirag.documents); "always" and
-- "none" are the other values. scirag.embed_query reads the setting on every call.
-- Chunk embeddings are never adapted, so switching needs no re-embedding. An admin's own
-- value is kept.
BEGIN;

INSERT INTO scirag.settings (key, value, description)
VALUES ('query_adapter', 'scoped',
        'query-side map applied to question embeddings before the vector search (trained on QASPER train, docs/answers.md): "scoped" when scirag.documents narrows the search, "always" or "none"')
ON CONFLICT (key) DO NOTHING;

COMMIT;
