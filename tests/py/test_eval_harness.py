"""`scirag eval retrieval|answer|report` on the demo corpus in scirag_pytest: the
evaluation tables fill with the corpus fingerprint and git commit; the judge is
skipped without a model and runs on recordings with one; malformed judge output is a
failure row; the report renders."""

from __future__ import annotations

import copy
import json

import pytest

from answer_fixtures import recording
from scirag.evaluation import qa as evalqa, report
from scirag_helpers.llm import RecordedClient, get_llm

PICK = ["q01-harlan-straw-supply", "q06-rice-straw-lignin", "q11-hx40-enzyme-loading", "q14-sorghum-ratio-unanswerable"]


@pytest.fixture(scope="module")
def questions():
    return [q for q in evalqa.load_questions() if q.id in PICK]


def test_seed_questions_load_and_carry_their_fields():
    qs = evalqa.load_questions()
    assert len(qs) >= 15 and len({q.id for q in qs}) == len(qs)
    assert {q.id for q in qs if q.unanswerable} >= {
        "q14-sorghum-ratio-unanswerable",
        "q15-hydrogen-fermentation-unanswerable",
    }
    assert all(q.expected_answer and q.question for q in qs)


def test_relevance_is_reference_document_or_evidence_phrase():
    q = evalqa.Question(
        "x", "q", reference_documents=["doc-a"], evidence_phrases=["Harlan County's  principal residue"]
    )
    assert evalqa.is_relevant({"external_id": "doc-a", "content": ""}, q)
    assert evalqa.is_relevant({"external_id": "doc-b", "content": "...harlan county's principal\nresidue is..."}, q)
    assert not evalqa.is_relevant({"external_id": "doc-b", "content": "Harlan County grows barley"}, q)


def test_eval_retrieval_fills_runs_results_and_the_config_view(dsn, demo_corpus, admin_conn, questions):
    with evalqa.reader_connection(dsn) as reader:
        configs = evalqa.retrieval_configs(reader, ["interactive"], presets=False)
        with_presets = evalqa.retrieval_configs(reader, ["interactive"])
    assert [c.name for c in configs] == ["interactive", "interactive-no_vector", "interactive-no_keyword"]
    # scirag.retrieve reads options.preset, so every shipped preset is an ablation config too
    assert [c.name for c in with_presets][3:] == [
        "preset:default",
        "preset:detailed-context",
        "preset:high-precision",
        "preset:high-recall",
    ]
    out = evalqa.run_retrieval(dsn, questions, configs[:2], dataset="pytest-demo", progress=lambda m: None)
    # q14 is unanswerable, q11's only reference is restricted (outside the reader's scope): 2 scored
    assert [s["questions"] for s in out] == [2, 2]
    run = admin_conn.execute(
        "SELECT corpus_fingerprint, git_commit, config FROM scirag.eval_runs WHERE id = %s", (out[0]["run"],)
    ).fetchone()
    fp, commit, config = run
    # the fingerprint counts what the run's (default reader) scope holds, not the whole corpus
    in_scope = admin_conn.execute(
        "SELECT count(*) FROM scirag.documents WHERE license IN ('public', 'open_commercial')"
    ).fetchone()[0]
    assert fp["documents"] == in_scope and fp["chunks"] > 0 and fp["embedding_versions"] and "kg_entities" in fp
    assert fp["latest_ingestion"] and commit
    assert config["excluded_questions"] == {"unanswerable": 1, "out_of_scope": 1}
    rows = admin_conn.execute(
        "SELECT config_name, hit_at_5, hit_at_10, mrr, n_questions FROM scirag.eval_config_metrics "
        "WHERE dataset = 'pytest-demo' ORDER BY run_id"
    ).fetchall()
    assert [r[0] for r in rows] == ["interactive", "interactive-no_vector"]
    assert all(0 <= r[1] <= r[2] <= 1 and 0 <= r[3] <= 1 and r[4] == 2 for r in rows)
    n = admin_conn.execute("SELECT count(*) FROM scirag.eval_results WHERE run_id = %s", (out[0]["run"],)).fetchone()[0]
    assert n == 2


def test_eval_answer_without_a_model_stores_the_mechanical_checks(dsn, demo_corpus, admin_conn, questions):
    s = evalqa.run_answers(dsn, questions, dataset="pytest-demo", llm=None, progress=lambda m: None)
    assert s["questions"] == 4 and s["judge_skipped"] == 4
    rows = {
        r[0]: r[1:]
        for r in admin_conn.execute(
            "SELECT question_id, expect_abstain, abstained, abstention_ok, citations_ok, numbers_ok, judge_status, "
            "groundedness FROM scirag.eval_answers WHERE run_id = %s",
            (s["run"],),
        )
    }
    assert rows["q14-sorghum-ratio-unanswerable"][:3] == (True, True, True)
    assert rows["q11-hx40-enzyme-loading"][:3] == (True, True, True), "restricted for a reader: must abstain"
    assert rows["q01-harlan-straw-supply"][:5] == (False, False, True, True, True)
    assert {r[5] for r in rows.values()} == {"skipped (no model configured)"}
    assert all(r[6] is None for r in rows.values())
    m = admin_conn.execute(
        "SELECT n_questions, citations_ok_rate, abstained_when_unanswerable, judge_skipped "
        "FROM scirag.eval_answer_metrics WHERE run_id = %s",
        (s["run"],),
    ).fetchone()
    assert m[0] == 4 and m[1] == 1 and m[2] == 1 and m[3] == 4


def test_eval_answer_with_a_recorded_judge_scores_and_fails_malformed_output(
    dsn, demo_corpus, admin_conn, questions, tmp_path
):
    valid = recording("answer_judge.json")["valid"]["in_order"]
    replies = valid * 3 + ["this is not JSON", '{"correctness": 1}']  # the 4th answer's grounding pass is malformed
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"in_order": replies}))
    llm = get_llm({"SCIRAG_LLM_PROVIDER": "recorded", "SCIRAG_LLM_RECORDING": str(path)})
    assert isinstance(llm, RecordedClient)
    s = evalqa.run_answers(
        dsn, questions, dataset="pytest-demo", llm=llm, config_name="recorded-judge", progress=lambda m: None
    )
    assert s["judged"] == 3 and s["judge_failed"] == 1
    rows = admin_conn.execute(
        "SELECT question_id, judge_status, grounding_status, correctness_status, groundedness, correctness, judge_error "
        "FROM scirag.eval_answers WHERE run_id = %s ORDER BY question_id",
        (s["run"],),
    ).fetchall()
    failed = [r for r in rows if r[1] == "failed"]
    assert len(failed) == 1 and failed[0][2] == "failed" and failed[0][4] is None and failed[0][5] == 1
    assert "grounding" in failed[0][6]
    ok = [r for r in rows if r[1] == "ok"]
    assert all(r[4] == 2 and r[5] == 2 for r in ok)
    # the grounding passes never saw a reference answer
    grounding_prompts = [c["prompt"] for c in llm.seen[0::2]]
    refs = [q.expected_answer for q in questions]
    assert not any(ref[:60] in p for p in grounding_prompts for ref in refs)
    assert all(c["temperature"] == 0.0 for c in llm.seen)


def test_the_report_renders_with_charts(dsn, demo_corpus, tmp_path):
    out = report.write_report([dsn], tmp_path / "report.html")
    html = out.read_text()
    assert html.startswith("<!doctype html>") and html.count("<svg") >= 2
    assert "pytest-demo: ablation" in html and "interactive-no_vector" in html
    assert "mechanical checks" in html and "git commit" in html


def test_the_report_compares_each_configurations_latest_run_with_the_one_before(dsn, loader_conn, tmp_path):
    # three runs of one configuration: the report pairs the last two, not the first
    for f1s in ((0.9, 0.9), (0.2, 0.4), (0.6, 0.4)):
        run = loader_conn.execute(
            "INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint, finished_at) "
            "VALUES ('beir', 'report-changes', 'cfg', '{}', '{}', now()) RETURNING id"
        ).fetchone()[0]
        for i, f1 in enumerate(f1s):
            loader_conn.execute(
                "INSERT INTO scirag.eval_results (run_id, question_id, metrics, retrieved) VALUES (%s, %s, %s, '{}')",
                (run, f"q{i}", json.dumps({"f1": f1})),
            )
    loader_conn.commit()
    html = report.write_report([dsn], tmp_path / "report.html").read_text()
    section = html[html.index("Since the previous run") :]
    block = section[section.index("report-changes") :]
    assert f"run {run - 1} &rarr; run {run}" in block
    # f1 before 0.300, after 0.500, up by 0.200 (one question up by 0.4, one the same)
    assert (
        "<td>f1</td><td>2</td><td>0.300</td><td>0.500</td><td>0.200</td><td>0.200</td><td>1.000</td><td>1</td><td>0</td>"
        in block
    )
