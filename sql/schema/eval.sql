-- Deploy scirag:schema/eval
-- Evaluation runs and per-question results, in plain tables BI tools can read.
BEGIN;
CREATE TABLE scirag.eval_runs (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind               text NOT NULL CHECK (kind IN ('beir', 'retrieval', 'answer', 'table')),
  dataset            text NOT NULL,
  split              text,
  config_name        text NOT NULL,
  config             jsonb NOT NULL,
  corpus_fingerprint jsonb NOT NULL,
  git_commit         text,
  started_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz,
  n_questions        int,
  metrics            jsonb
);
ALTER TABLE scirag.eval_runs OWNER TO scirag_owner;
COMMENT ON TABLE scirag.eval_runs IS 'One evaluation run of one configuration: what was measured, on which corpus (fingerprint) and code (git commit)';
COMMENT ON COLUMN scirag.eval_runs.id IS 'run id';
COMMENT ON COLUMN scirag.eval_runs.kind IS 'beir (nDCG@10/Recall@100/MRR), retrieval (hit@k/MRR on seed questions), answer (judge), table (SciTab table retrieval)';
COMMENT ON COLUMN scirag.eval_runs.dataset IS 'dataset name, e.g. scifact';
COMMENT ON COLUMN scirag.eval_runs.split IS 'dataset split, e.g. train';
COMMENT ON COLUMN scirag.eval_runs.config_name IS 'short name of the configuration (ablation label)';
COMMENT ON COLUMN scirag.eval_runs.config IS 'profile and options passed to scirag.retrieve';
COMMENT ON COLUMN scirag.eval_runs.corpus_fingerprint IS 'document, chunk and graph counts, embedding versions, latest ingestion: a number without it is a rumour';
COMMENT ON COLUMN scirag.eval_runs.git_commit IS 'commit of the code that ran';
COMMENT ON COLUMN scirag.eval_runs.started_at IS 'start time';
COMMENT ON COLUMN scirag.eval_runs.finished_at IS 'end time (NULL if it did not finish)';
COMMENT ON COLUMN scirag.eval_runs.n_questions IS 'questions scored';
COMMENT ON COLUMN scirag.eval_runs.metrics IS 'aggregate metrics (means over questions), e.g. {"ndcg@10": 0.70}';

CREATE TABLE scirag.eval_results (
  run_id      bigint NOT NULL REFERENCES scirag.eval_runs (id) ON DELETE CASCADE,
  question_id text NOT NULL,
  metrics     jsonb NOT NULL,
  retrieved   text[] NOT NULL,
  ms          real,
  PRIMARY KEY (run_id, question_id)
);
ALTER TABLE scirag.eval_results OWNER TO scirag_owner;
COMMENT ON TABLE scirag.eval_results IS 'Per-question metrics of an evaluation run';
COMMENT ON COLUMN scirag.eval_results.run_id IS 'evaluation run';
COMMENT ON COLUMN scirag.eval_results.question_id IS 'question (query) id in the dataset';
COMMENT ON COLUMN scirag.eval_results.metrics IS 'metrics for this question';
COMMENT ON COLUMN scirag.eval_results.retrieved IS 'retrieved document ids in rank order (deduplicated)';
COMMENT ON COLUMN scirag.eval_results.ms IS 'retrieval time for this question';

CREATE VIEW scirag.eval_metrics WITH (security_invoker = true) AS
SELECT r.id AS run_id, r.kind, r.dataset, r.split, r.config_name, r.started_at, r.git_commit,
       r.n_questions, m.key AS metric, m.value::text::double precision AS value,
       (r.corpus_fingerprint->>'documents')::bigint AS corpus_documents
FROM scirag.eval_runs r, jsonb_each(coalesce(r.metrics, '{}')) AS m
WHERE jsonb_typeof(m.value) = 'number';
ALTER VIEW scirag.eval_metrics OWNER TO scirag_owner;
COMMENT ON VIEW scirag.eval_metrics IS 'One row per run and metric: the long format BI tools chart directly';
COMMENT ON COLUMN scirag.eval_metrics.run_id IS 'evaluation run';
COMMENT ON COLUMN scirag.eval_metrics.kind IS 'kind of evaluation';
COMMENT ON COLUMN scirag.eval_metrics.dataset IS 'dataset';
COMMENT ON COLUMN scirag.eval_metrics.split IS 'split';
COMMENT ON COLUMN scirag.eval_metrics.config_name IS 'configuration (ablation label)';
COMMENT ON COLUMN scirag.eval_metrics.started_at IS 'when the run started';
COMMENT ON COLUMN scirag.eval_metrics.git_commit IS 'code commit';
COMMENT ON COLUMN scirag.eval_metrics.n_questions IS 'questions scored';
COMMENT ON COLUMN scirag.eval_metrics.metric IS 'metric name';
COMMENT ON COLUMN scirag.eval_metrics.value IS 'metric value';
COMMENT ON COLUMN scirag.eval_metrics.corpus_documents IS 'documents in the corpus fingerprint';

ALTER TABLE scirag.eval_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.eval_runs FORCE ROW LEVEL SECURITY;
ALTER TABLE scirag.eval_results ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.eval_results FORCE ROW LEVEL SECURITY;
-- Evaluation numbers are not evidence: every scirag role may read them; the loader writes them.
CREATE POLICY read_all ON scirag.eval_runs FOR SELECT TO PUBLIC USING (true);
CREATE POLICY loader_all ON scirag.eval_runs FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY read_all ON scirag.eval_results FOR SELECT TO PUBLIC USING (true);
CREATE POLICY loader_all ON scirag.eval_results FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
GRANT SELECT ON scirag.eval_runs, scirag.eval_results, scirag.eval_metrics TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.eval_runs, scirag.eval_results TO scirag_loader;

CREATE OR REPLACE FUNCTION scirag.corpus_fingerprint()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  -- Counts what the caller can see: run it as the loader for the whole corpus.
  SELECT jsonb_build_object(
    'documents', (SELECT count(*) FROM scirag.documents),
    'chunks', (SELECT count(*) FROM scirag.chunks),
    'embedded_chunks', (SELECT count(*) FROM scirag.chunks WHERE embedding IS NOT NULL),
    'embedding_versions', (SELECT coalesce(jsonb_agg(DISTINCT embedding_version), '[]')
                           FROM scirag.chunks WHERE embedding_version IS NOT NULL),
    'latest_ingestion', (SELECT max(ingested_at) FROM scirag.documents))
$$;
COMMENT ON FUNCTION scirag.corpus_fingerprint() IS
  'Document and chunk counts, embedding versions and latest ingestion time of the visible corpus, stored with every evaluation run.';
GRANT EXECUTE ON FUNCTION scirag.corpus_fingerprint() TO scirag_reader, scirag_loader;
COMMIT;
