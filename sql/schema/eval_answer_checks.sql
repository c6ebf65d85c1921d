-- Deploy scirag:schema/eval_answer_checks
-- Answer evaluation on question sets with acceptable answer strings (the papers'
-- development questions): was the answer right, does the chunk it cites hold the
-- answer, and did every answer sentence pass the `supports` check. The columns are
-- NULL where they do not apply (no acceptable strings, an unanswerable question,
-- runs stored before this change).
BEGIN;

ALTER TABLE scirag.eval_answers
  ADD COLUMN answer_correct     boolean,
  ADD COLUMN cited_holds_answer boolean,
  ADD COLUMN supports_ok        boolean,
  ADD COLUMN unsupported        int[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN scirag.eval_answers.answer_correct IS
  'an acceptable answer string occurs in the answer (Unicode NFKC, quotes folded, whitespace collapsed, case-insensitive); NULL when the question has no acceptable strings or expects an abstention';
COMMENT ON COLUMN scirag.eval_answers.cited_holds_answer IS
  'a chunk the answer cites contains an acceptable answer string (same normalisation); NULL like answer_correct';
COMMENT ON COLUMN scirag.eval_answers.supports_ok IS
  'check: every answer sentence is supported by a source it cites (its key terms and numbers together in one sentence or table row of that source)';
COMMENT ON COLUMN scirag.eval_answers.unsupported IS 'positions (1-based) of the answer sentences that failed the supports check';

-- The same view with the new rates appended (CREATE OR REPLACE keeps the columns before them).
CREATE OR REPLACE VIEW scirag.eval_answer_metrics WITH (security_invoker = true) AS
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
       percentile_cont(0.5) WITHIN GROUP (ORDER BY a.ms) AS p50_ms,
       avg(a.answer_correct::int) AS answer_correct_rate,
       avg(a.cited_holds_answer::int) AS cited_holds_answer_rate,
       avg(a.supports_ok::int) AS supports_ok_rate
FROM scirag.eval_runs r
JOIN scirag.eval_answers a ON a.run_id = r.id
WHERE r.kind = 'answer'
GROUP BY r.id;
COMMENT ON COLUMN scirag.eval_answer_metrics.answer_correct_rate IS
  'share of answerable questions (with acceptable strings) whose answer contains one (abstaining counts as wrong)';
COMMENT ON COLUMN scirag.eval_answer_metrics.cited_holds_answer_rate IS
  'share of answerable questions whose cited chunks contain an acceptable answer string';
COMMENT ON COLUMN scirag.eval_answer_metrics.supports_ok_rate IS
  'share of answers whose every sentence passed the supports check';
COMMIT;
