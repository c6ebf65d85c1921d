"""The blind two-pass judge on recorded responses: the grounding pass never sees the
reference (asserted on the prompt the model was shown), the correctness pass sees only
the answer and the reference, temperature 0, scores clamped to 0-2, and a malformed
reply is a failed pass with no score, never a coerced one."""

from __future__ import annotations

import copy

import pytest

from answer_fixtures import recording
from scirag_helpers import judge, prompts
from scirag_helpers.llm import RecordedClient

QUESTION = "How much straw could Harlan County supply each year?"
ANSWER = "Harlan County could supply about 120,300 dry tonnes of straw per year [1]."
REFERENCE = "REFERENCE-ONLY: about 120,300 dry tonnes per year, 58 % of it barley straw (69,809 t)."
SOURCES = [
    {
        "n": 1,
        "title": "County Assessment",
        "section_path": "3 Results",
        "external_id": "county",
        "citation": {"lines": "69-71"},
        "text": "In total Harlan County could supply about 120,300 dry tonnes.",
    },
    {
        "n": 2,
        "title": "Composition",
        "section_path": "",
        "external_id": "comp",
        "citation": {},
        "text": "SOURCE-ONLY barley straw 5.4 % ash.",
    },
]


def run(name):
    llm = RecordedClient(copy.deepcopy(recording("answer_judge.json")[name]))
    j = judge.judge_answer(
        llm,
        question=QUESTION,
        answer=ANSWER,
        sources=SOURCES,
        reference=REFERENCE,
        grounding_template=prompts.default_template("judge_grounding"),
        correctness_template=prompts.default_template("judge_correctness"),
        model_label="recorded:test",
    )
    return j, llm.seen


def test_two_blind_passes_with_scores():
    j, seen = run("valid")
    assert j.status == "ok" and j.grounding_status == "ok" and j.correctness_status == "ok"
    assert j.scores == {"groundedness": 2.0, "citation_accuracy": 2.0, "completeness": 1.0, "correctness": 2.0}
    assert j.rationale["grounding"].startswith("Supported by [1]")
    assert len(seen) == 2


def test_the_grounding_pass_never_sees_the_reference():
    _, (grounding, correctness) = run("valid")
    shown = grounding["system"] + grounding["prompt"]
    assert "REFERENCE-ONLY" not in shown and "69,809" not in shown
    assert QUESTION in shown and ANSWER in shown
    assert "[S1] Source: County Assessment > 3 Results (county, lines 69-71)" in shown and "SOURCE-ONLY" in shown


def test_the_correctness_pass_sees_only_answer_and_reference():
    _, (_, correctness) = run("valid")
    shown = correctness["system"] + correctness["prompt"]
    assert "REFERENCE-ONLY" in shown and ANSWER in shown
    assert "SOURCE-ONLY" not in shown and "County Assessment" not in shown and QUESTION not in shown


def test_both_passes_run_at_temperature_zero_in_json_mode():
    _, seen = run("valid")
    assert [(s["temperature"], s["json_mode"]) for s in seen] == [(0.0, True), (0.0, True)]


def test_scores_are_clamped_to_the_rubric():
    j, _ = run("out_of_range")
    assert j.status == "ok"
    assert j.scores == {"groundedness": 2.0, "citation_accuracy": 0.0, "completeness": 1.5, "correctness": 2.0}


@pytest.mark.parametrize(
    "name,failed_pass",
    [
        ("malformed_grounding", "grounding"),
        ("string_score", "both"),
        ("missing_key", "both"),
        ("not_finite", "grounding"),
    ],
)
def test_a_malformed_reply_is_a_failure_never_a_coerced_score(name, failed_pass):
    j, _ = run(name)
    assert j.status == "failed" and j.errors
    if failed_pass in ("grounding", "both"):
        assert j.grounding_status == "failed"
        assert not {"groundedness", "citation_accuracy", "completeness"} & set(j.scores)
    if failed_pass == "both":
        assert j.correctness_status == "failed" and "correctness" not in j.scores
    if failed_pass == "grounding":
        assert j.correctness_status == "ok" and "correctness" in j.scores


def test_a_model_error_is_a_failure():
    j = judge.judge_answer(
        RecordedClient({"in_order": []}),
        question=QUESTION,
        answer=ANSWER,
        sources=SOURCES,
        reference=REFERENCE,
        grounding_template=prompts.default_template("judge_grounding"),
        correctness_template=prompts.default_template("judge_correctness"),
    )
    assert j.status == "failed" and j.grounding_status == j.correctness_status == "failed"
    assert j.scores == {}


def test_without_a_model_the_judge_is_skipped_and_says_so():
    j = judge.judge_answer(
        None,
        question=QUESTION,
        answer=ANSWER,
        sources=SOURCES,
        reference=REFERENCE,
        grounding_template=prompts.default_template("judge_grounding"),
        correctness_template=prompts.default_template("judge_correctness"),
    )
    assert j.status == "skipped (no model configured)" and j.scores == {}
