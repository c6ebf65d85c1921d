-- Revert scirag:schema/eval_answer_checks
-- The view goes back to its schema/eval_answers definition (a replaced view cannot
-- lose columns, so it is dropped and re-created with its comments and grants).
BEGIN;
DROP VIEW scirag.eval_answer_metrics;
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
ALTER VIEW scirag.eval_answer_metrics OWNER TO scirag_owner;
COMMENT ON VIEW scirag.eval_answer_metrics IS
  'Answer quality per run: mechanical checks (citations, numbers, abstention; always present) and mean judge scores 0-2 (NULL when the judge was skipped), over the eval_answers rows the caller may see.';
REVOKE ALL ON scirag.eval_answer_metrics FROM PUBLIC;
GRANT SELECT ON scirag.eval_answer_metrics TO scirag_reader, scirag_loader;
ALTER TABLE scirag.eval_answers DROP COLUMN answer_correct, DROP COLUMN cited_holds_answer,
  DROP COLUMN supports_ok, DROP COLUMN unsupported;
COMMIT;
