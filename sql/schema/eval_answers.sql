-- Deploy scirag:schema/eval_answers
-- Seed questions, judged answers and the views BI tools read (DESIGN.md section 10).
-- eval_runs / eval_results (schema/eval) hold runs and per-question retrieval metrics;
-- this change adds what answer evaluation needs.
BEGIN;

CREATE TABLE scirag.eval_questions (
  dataset             text NOT NULL,
  question_id         text NOT NULL,
  question            text NOT NULL,
  expected_answer     text NOT NULL DEFAULT '',
  reference_documents text[] NOT NULL DEFAULT '{}',
  evidence_phrases    text[] NOT NULL DEFAULT '{}',
  tags                text[] NOT NULL DEFAULT '{}',
  origin              text NOT NULL,
  loaded_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset, question_id),
  -- an unanswerable question names no evidence
  CHECK (NOT ('unanswerable' = ANY (tags)) OR (cardinality(reference_documents) = 0 AND cardinality(evidence_phrases) = 0))
);
ALTER TABLE scirag.eval_questions OWNER TO scirag_owner;
COMMENT ON TABLE scirag.eval_questions IS
  'Seed questions an expert vouches for (domain/questions.yaml, or a benchmark built at run time such as PubMedQA): the question, what a correct answer must say, where it is, and distinctive evidence phrases. A reader sees a question only when every reference document is visible to it (an expected answer can quote a restricted document).';
COMMENT ON COLUMN scirag.eval_questions.dataset IS 'question set, e.g. demo or pubmedqa';
COMMENT ON COLUMN scirag.eval_questions.question_id IS 'stable id within the dataset';
COMMENT ON COLUMN scirag.eval_questions.question IS 'the question as a user would ask it';
COMMENT ON COLUMN scirag.eval_questions.expected_answer IS 'the expert reference: what a correct answer must say (seen only by the correctness judge)';
COMMENT ON COLUMN scirag.eval_questions.reference_documents IS 'manifest ids of the documents that contain the answer (empty for unanswerable questions)';
COMMENT ON COLUMN scirag.eval_questions.evidence_phrases IS 'distinctive phrases from those documents; a retrieved chunk containing one (case and whitespace normalised) is relevant';
COMMENT ON COLUMN scirag.eval_questions.tags IS 'labels such as unanswerable, multi-hop, restricted, numeric, table';
COMMENT ON COLUMN scirag.eval_questions.origin IS 'where the question came from (file path or benchmark file)';
COMMENT ON COLUMN scirag.eval_questions.loaded_at IS 'when the row was last written';

CREATE TABLE scirag.eval_answers (
  run_id               bigint NOT NULL REFERENCES scirag.eval_runs (id) ON DELETE CASCADE,
  question_id          text NOT NULL,
  tags                 text[] NOT NULL DEFAULT '{}',
  expect_abstain       boolean NOT NULL,
  answer               text NOT NULL,
  answerer             text NOT NULL,
  intent               text,
  abstained            boolean NOT NULL,
  citations            jsonb NOT NULL DEFAULT '[]',
  evidence_documents   bigint[] NOT NULL DEFAULT '{}',
  evidence_hit         boolean,
  sources_shown        int NOT NULL,
  prompt_tokens        int,
  citations_ok         boolean NOT NULL,
  invalid_citations    int[] NOT NULL DEFAULT '{}',
  numbers_ok           boolean NOT NULL,
  ungrounded_numbers   text[] NOT NULL DEFAULT '{}',
  abstention_ok        boolean NOT NULL,
  uncited_sentences    int NOT NULL DEFAULT 0,
  judge_status         text NOT NULL CHECK (judge_status IN ('ok', 'failed', 'skipped (no model configured)')),
  judge_model          text,
  grounding_status     text CHECK (grounding_status IN ('ok', 'failed')),
  correctness_status   text CHECK (correctness_status IN ('ok', 'failed')),
  groundedness         real CHECK (groundedness BETWEEN 0 AND 2),
  citation_accuracy    real CHECK (citation_accuracy BETWEEN 0 AND 2),
  completeness         real CHECK (completeness BETWEEN 0 AND 2),
  correctness          real CHECK (correctness BETWEEN 0 AND 2),
  judge_error          text,
  judge_rationale      jsonb,
  ms                   real,
  PRIMARY KEY (run_id, question_id),
  -- A failed pass has no score: a malformed judge reply is never coerced into one.
  CHECK (grounding_status = 'ok' OR (groundedness IS NULL AND citation_accuracy IS NULL AND completeness IS NULL)),
  CHECK (correctness_status = 'ok' OR correctness IS NULL),
  CHECK ((judge_status = 'ok') = (grounding_status = 'ok' AND correctness_status = 'ok'))
);
ALTER TABLE scirag.eval_answers OWNER TO scirag_owner;
CREATE INDEX eval_answers_evidence ON scirag.eval_answers USING gin (evidence_documents);
COMMENT ON TABLE scirag.eval_answers IS
  'One judged answer per run and question: the answer, its citations, the mechanical checks (no model needed) and the two blind judge passes. A reader sees a row only when every document that fed the answer is visible to it.';
COMMENT ON COLUMN scirag.eval_answers.run_id IS 'evaluation run (eval_runs.kind = answer)';
COMMENT ON COLUMN scirag.eval_answers.question_id IS 'question id (eval_questions.question_id of the run''s dataset)';
COMMENT ON COLUMN scirag.eval_answers.tags IS 'the question''s tags at run time';
COMMENT ON COLUMN scirag.eval_answers.expect_abstain IS 'true when the question is unanswerable in the run''s scope (tagged unanswerable, or every reference document out of scope)';
COMMENT ON COLUMN scirag.eval_answers.answer IS 'answer text with inline [n] citations';
COMMENT ON COLUMN scirag.eval_answers.answerer IS 'extractive, or provider:model of the answering model';
COMMENT ON COLUMN scirag.eval_answers.intent IS 'classified question intent';
COMMENT ON COLUMN scirag.eval_answers.abstained IS 'the answer says the sources do not contain the answer';
COMMENT ON COLUMN scirag.eval_answers.citations IS 'cited sources: n, document, chunk, title, section path, page or lines';
COMMENT ON COLUMN scirag.eval_answers.evidence_documents IS 'every document that fed the answer (retrieved); drives row visibility';
COMMENT ON COLUMN scirag.eval_answers.evidence_hit IS 'a source shown to the answerer is relevant (reference document or evidence phrase); NULL for unanswerable questions';
COMMENT ON COLUMN scirag.eval_answers.sources_shown IS 'numbered sources shown to the answerer';
COMMENT ON COLUMN scirag.eval_answers.prompt_tokens IS 'approximate tokens of what the answerer was shown';
COMMENT ON COLUMN scirag.eval_answers.citations_ok IS 'check: every [n] points at a provided source, and a non-abstaining answer cites at least one';
COMMENT ON COLUMN scirag.eval_answers.invalid_citations IS 'citation numbers that point at no provided source';
COMMENT ON COLUMN scirag.eval_answers.numbers_ok IS 'check: every number in the answer appears in a source it cites';
COMMENT ON COLUMN scirag.eval_answers.ungrounded_numbers IS 'numbers in the answer found in no cited source';
COMMENT ON COLUMN scirag.eval_answers.abstention_ok IS 'check: abstained exactly when the question is unanswerable in scope';
COMMENT ON COLUMN scirag.eval_answers.uncited_sentences IS 'sentences stating something without a citation';
COMMENT ON COLUMN scirag.eval_answers.judge_status IS 'ok (both passes valid), failed (a pass errored or replied malformed), or skipped (no model configured)';
COMMENT ON COLUMN scirag.eval_answers.judge_model IS 'provider:model of the judge';
COMMENT ON COLUMN scirag.eval_answers.grounding_status IS 'grounding pass: ok or failed (NULL when skipped)';
COMMENT ON COLUMN scirag.eval_answers.correctness_status IS 'correctness pass: ok or failed (NULL when skipped)';
COMMENT ON COLUMN scirag.eval_answers.groundedness IS 'grounding pass, 0-2: claims supported by the sources shown';
COMMENT ON COLUMN scirag.eval_answers.citation_accuracy IS 'grounding pass, 0-2: citations point at supporting sources';
COMMENT ON COLUMN scirag.eval_answers.completeness IS 'grounding pass, 0-2: gives what the sources offer, or correctly says they lack it';
COMMENT ON COLUMN scirag.eval_answers.correctness IS 'correctness pass, 0-2: agrees with the expert reference';
COMMENT ON COLUMN scirag.eval_answers.judge_error IS 'why a judge pass failed';
COMMENT ON COLUMN scirag.eval_answers.judge_rationale IS 'the judge''s short rationales per pass';
COMMENT ON COLUMN scirag.eval_answers.ms IS 'time to answer (scirag.answer), milliseconds';

-- Per-run, per-config numbers in wide form: one row per run, one column per metric.
CREATE VIEW scirag.eval_config_metrics WITH (security_invoker = true) AS
SELECT r.id AS run_id, r.kind, r.dataset, r.split, r.config_name,
       r.config->>'profile' AS profile, r.started_at, r.finished_at, r.git_commit, r.n_questions,
       (r.metrics->>'hit@5')::float8 AS hit_at_5,
       (r.metrics->>'hit@10')::float8 AS hit_at_10,
       coalesce((r.metrics->>'mrr')::float8, (r.metrics->>'mrr@10')::float8) AS mrr,
       (r.metrics->>'ndcg@10')::float8 AS ndcg_at_10,
       (r.metrics->>'recall@100')::float8 AS recall_at_100,
       (r.metrics->>'p50_ms')::float8 AS p50_ms,
       (r.corpus_fingerprint->>'documents')::bigint AS corpus_documents,
       (r.corpus_fingerprint->>'chunks')::bigint AS corpus_chunks,
       r.corpus_fingerprint->'embedding_versions' AS embedding_versions,
       (r.corpus_fingerprint->>'latest_ingestion')::timestamptz AS latest_ingestion
FROM scirag.eval_runs r
WHERE r.kind IN ('retrieval', 'beir', 'table');
COMMENT ON VIEW scirag.eval_config_metrics IS
  'Retrieval metrics per run and configuration (ablation label), wide: hit@5, hit@10, MRR (seed questions), nDCG@10 and Recall@100 (BEIR), latency, and the corpus fingerprint. Chart it by config_name, or over started_at for history.';
COMMENT ON COLUMN scirag.eval_config_metrics.run_id IS 'evaluation run';
COMMENT ON COLUMN scirag.eval_config_metrics.kind IS 'retrieval, beir or table';
COMMENT ON COLUMN scirag.eval_config_metrics.dataset IS 'question set or benchmark';
COMMENT ON COLUMN scirag.eval_config_metrics.split IS 'dataset split (benchmarks)';
COMMENT ON COLUMN scirag.eval_config_metrics.config_name IS 'configuration label, e.g. interactive or deep-no_vector';
COMMENT ON COLUMN scirag.eval_config_metrics.profile IS 'retrieval profile the configuration started from';
COMMENT ON COLUMN scirag.eval_config_metrics.started_at IS 'when the run started';
COMMENT ON COLUMN scirag.eval_config_metrics.finished_at IS 'when it finished (NULL: did not)';
COMMENT ON COLUMN scirag.eval_config_metrics.git_commit IS 'code commit (-dirty: uncommitted changes)';
COMMENT ON COLUMN scirag.eval_config_metrics.n_questions IS 'questions scored (unanswerable ones are excluded from retrieval metrics)';
COMMENT ON COLUMN scirag.eval_config_metrics.hit_at_5 IS 'share of questions with a relevant item in the top 5';
COMMENT ON COLUMN scirag.eval_config_metrics.hit_at_10 IS 'share of questions with a relevant item in the top 10';
COMMENT ON COLUMN scirag.eval_config_metrics.mrr IS 'mean reciprocal rank of the first relevant item';
COMMENT ON COLUMN scirag.eval_config_metrics.ndcg_at_10 IS 'nDCG@10 (BEIR runs)';
COMMENT ON COLUMN scirag.eval_config_metrics.recall_at_100 IS 'Recall@100 (BEIR runs)';
COMMENT ON COLUMN scirag.eval_config_metrics.p50_ms IS 'median retrieval time, milliseconds';
COMMENT ON COLUMN scirag.eval_config_metrics.corpus_documents IS 'documents in the corpus fingerprint';
COMMENT ON COLUMN scirag.eval_config_metrics.corpus_chunks IS 'chunks in the corpus fingerprint';
COMMENT ON COLUMN scirag.eval_config_metrics.embedding_versions IS 'embedding versions in the corpus fingerprint';
COMMENT ON COLUMN scirag.eval_config_metrics.latest_ingestion IS 'latest ingestion time in the corpus fingerprint';

-- Per-run answer quality, computed from the rows the caller may see.
CREATE VIEW scirag.eval_answer_metrics WITH (security_invoker = true) AS
SELECT r.id AS run_id, r.dataset, r.config_name, r.started_at, r.git_commit,
       (r.corpus_fingerprint->>'documents')::bigint AS corpus_documents,
       count(a.*) AS n_questions,
       count(a.*) FILTER (WHERE a.expect_abstain) AS n_unanswerable,
       avg(a.citations_ok::int) AS citations_ok_rate,
       avg(a.numbers_ok::int) AS numbers_ok_rate,
       avg(a.abstained::int) FILTER (WHERE a.expect_abstain) AS abstained_when_unanswerable,
       avg(a.abstained::int) FILTER (WHERE NOT a.expect_abstain) AS abstained_when_answerable,
       avg(a.abstention_ok::int) AS abstention_ok_rate,
       avg(a.evidence_hit::int) AS evidence_hit_rate,
       avg(a.uncited_sentences) AS uncited_sentences_mean,
       count(a.*) FILTER (WHERE a.judge_status = 'ok') AS judged,
       count(a.*) FILTER (WHERE a.judge_status = 'failed') AS judge_failed,
       count(a.*) FILTER (WHERE a.judge_status LIKE 'skipped%') AS judge_skipped,
       avg(a.groundedness) AS groundedness,
       avg(a.citation_accuracy) AS citation_accuracy,
       avg(a.completeness) AS completeness,
       avg(a.correctness) AS correctness,
       avg(a.prompt_tokens) AS prompt_tokens_mean,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY a.ms) AS p50_ms
FROM scirag.eval_runs r
JOIN scirag.eval_answers a ON a.run_id = r.id
WHERE r.kind = 'answer'
GROUP BY r.id;
COMMENT ON VIEW scirag.eval_answer_metrics IS
  'Answer quality per run: mechanical checks (citations, numbers, abstention; always present) and mean judge scores 0-2 (NULL when the judge was skipped), over the eval_answers rows the caller may see.';
COMMENT ON COLUMN scirag.eval_answer_metrics.run_id IS 'evaluation run';
COMMENT ON COLUMN scirag.eval_answer_metrics.dataset IS 'question set';
COMMENT ON COLUMN scirag.eval_answer_metrics.config_name IS 'configuration label (answerer, compression)';
COMMENT ON COLUMN scirag.eval_answer_metrics.started_at IS 'when the run started';
COMMENT ON COLUMN scirag.eval_answer_metrics.git_commit IS 'code commit';
COMMENT ON COLUMN scirag.eval_answer_metrics.corpus_documents IS 'documents in the corpus fingerprint';
COMMENT ON COLUMN scirag.eval_answer_metrics.n_questions IS 'answers visible to the caller';
COMMENT ON COLUMN scirag.eval_answer_metrics.n_unanswerable IS 'of which unanswerable in the run''s scope';
COMMENT ON COLUMN scirag.eval_answer_metrics.citations_ok_rate IS 'share of answers whose citations all point at provided sources';
COMMENT ON COLUMN scirag.eval_answer_metrics.numbers_ok_rate IS 'share of answers whose numbers all appear in cited sources';
COMMENT ON COLUMN scirag.eval_answer_metrics.abstained_when_unanswerable IS 'share of unanswerable questions abstained on (want 1)';
COMMENT ON COLUMN scirag.eval_answer_metrics.abstained_when_answerable IS 'share of answerable questions abstained on (want 0)';
COMMENT ON COLUMN scirag.eval_answer_metrics.abstention_ok_rate IS 'share of answers that abstained exactly when they should';
COMMENT ON COLUMN scirag.eval_answer_metrics.evidence_hit_rate IS 'share of answerable questions with a relevant source among those shown';
COMMENT ON COLUMN scirag.eval_answer_metrics.uncited_sentences_mean IS 'mean number of uncited claim sentences per answer';
COMMENT ON COLUMN scirag.eval_answer_metrics.judged IS 'answers both judge passes scored';
COMMENT ON COLUMN scirag.eval_answer_metrics.judge_failed IS 'answers where a judge pass failed (malformed reply or error)';
COMMENT ON COLUMN scirag.eval_answer_metrics.judge_skipped IS 'answers not judged because no model was configured';
COMMENT ON COLUMN scirag.eval_answer_metrics.groundedness IS 'mean groundedness, 0-2';
COMMENT ON COLUMN scirag.eval_answer_metrics.citation_accuracy IS 'mean citation accuracy, 0-2';
COMMENT ON COLUMN scirag.eval_answer_metrics.completeness IS 'mean completeness, 0-2';
COMMENT ON COLUMN scirag.eval_answer_metrics.correctness IS 'mean correctness against the reference, 0-2';
COMMENT ON COLUMN scirag.eval_answer_metrics.prompt_tokens_mean IS 'mean approximate tokens shown to the answerer';
COMMENT ON COLUMN scirag.eval_answer_metrics.p50_ms IS 'median answer time, milliseconds';

ALTER VIEW scirag.eval_config_metrics OWNER TO scirag_owner;
ALTER VIEW scirag.eval_answer_metrics OWNER TO scirag_owner;

ALTER TABLE scirag.eval_questions ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.eval_questions FORCE ROW LEVEL SECURITY;
ALTER TABLE scirag.eval_answers ENABLE ROW LEVEL SECURITY;
ALTER TABLE scirag.eval_answers FORCE ROW LEVEL SECURITY;
-- Visible exactly when every document behind the row is visible (the documents policy
-- decides, so scope, ceilings and exclusions all apply): an expected answer or an
-- answer text can quote a restricted document.
CREATE POLICY scope_read ON scirag.eval_questions FOR SELECT TO PUBLIC
  USING (NOT EXISTS (SELECT 1 FROM unnest(reference_documents) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.external_id = x)));
CREATE POLICY loader_all ON scirag.eval_questions FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
CREATE POLICY scope_read ON scirag.eval_answers FOR SELECT TO PUBLIC
  USING (NOT EXISTS (SELECT 1 FROM unnest(evidence_documents) AS x
                     WHERE NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = x)));
CREATE POLICY loader_all ON scirag.eval_answers FOR ALL TO scirag_loader USING (true) WITH CHECK (true);
REVOKE ALL ON scirag.eval_questions, scirag.eval_answers, scirag.eval_config_metrics, scirag.eval_answer_metrics FROM PUBLIC;
GRANT SELECT ON scirag.eval_questions, scirag.eval_answers, scirag.eval_config_metrics, scirag.eval_answer_metrics
  TO scirag_reader, scirag_loader;
GRANT INSERT, UPDATE, DELETE ON scirag.eval_questions, scirag.eval_answers TO scirag_loader;

CREATE OR REPLACE FUNCTION scirag.corpus_fingerprint_full()
RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  fp jsonb := scirag.corpus_fingerprint();
  t text;
  n bigint;
BEGIN
  -- Graph tables arrive with the graph layer; count them when they exist.
  FOREACH t IN ARRAY ARRAY['kg_entities', 'kg_relationships', 'kg_communities'] LOOP
    IF to_regclass('scirag.' || t) IS NOT NULL THEN
      EXECUTE format('SELECT count(*) FROM scirag.%I', t) INTO n;
    ELSE
      n := 0;
    END IF;
    fp := fp || jsonb_build_object(t, n);
  END LOOP;
  RETURN fp;
END $$;
COMMENT ON FUNCTION scirag.corpus_fingerprint_full() IS
  'corpus_fingerprint() plus graph counts (entities, relationships, communities; 0 while the graph tables do not exist), over what the caller can see: stored with every answer and retrieval evaluation run.';
REVOKE ALL ON FUNCTION scirag.corpus_fingerprint_full() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION scirag.corpus_fingerprint_full() TO scirag_reader, scirag_loader;
COMMIT;
