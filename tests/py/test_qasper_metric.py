"""The QASPER Answer F1 as scirag eval qasper computes it (python/loader/scirag/evaluation/qasper.py):
normalisation, token F1, yes/no and unanswerable references, the best annotator's
type, abstention precision/recall and the confidence AUROC."""

from __future__ import annotations

import io
import json
import tarfile

import pytest

from scirag.evaluation import qasper


def ann(**kw):
    base = {"unanswerable": False, "yes_no": None, "free_form_answer": "", "extractive_spans": [], "evidence": []}
    return {**base, **kw}


def test_normalisation_drops_case_punctuation_and_articles():
    assert qasper.normalize_answer("The  Cat, a dog! An (owl).") == "cat dog owl"
    assert qasper.normalize_answer("theme another") == "theme another"  # articles only as whole words


def test_token_f1():
    assert qasper.token_f1("the SQuAD dataset", "SQuAD dataset") == 1.0
    assert qasper.token_f1("SQuAD", "SQuAD and TriviaQA") == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    assert qasper.token_f1("nothing shared", "SQuAD") == 0.0
    assert qasper.token_f1("", "") == 1.0


def test_references_by_type_and_the_best_annotator_decides():
    answers = [ann(extractive_spans=["SQuAD", "TriviaQA"]), ann(yes_no=True), ann(unanswerable=True)]
    assert [qasper.reference(a) for a in answers] == [
        ("SQuAD, TriviaQA", "extractive"),
        ("Yes", "yes_no"),
        ("Unanswerable", "unanswerable"),
    ]
    assert qasper.score("Yes", answers) == (1.0, "yes_no")
    assert qasper.score("Unanswerable", answers) == (1.0, "unanswerable")
    f1, kind = qasper.score("SQuAD", answers)
    assert kind == "extractive" and f1 == pytest.approx(2 / 3)
    # a planted wrong answer scores nothing
    assert qasper.score("No", [ann(yes_no=True)]) == (0.0, "yes_no")
    assert qasper.score("anything", [ann(free_form_answer="a long free answer")])[1] == "abstractive"


def test_prediction_prefers_the_short_answer_and_strips_citations():
    assert qasper.prediction({"abstained": True, "answer": "x"}) == "Unanswerable"
    assert qasper.prediction({"abstained": False, "short_answer": "Yes", "answer": "Yes. Because [1]."}) == "Yes"
    assert qasper.prediction({"abstained": False, "answer": "It uses SQuAD [1, 2]."}) == "It uses SQuAD ."


def test_summary_abstention_and_auroc():
    rows = [
        {
            "f1": 1.0,
            "type": "unanswerable",
            "unanswerable_gold": True,
            "abstained": True,
            "evidence_hit": None,
            "ms": 10,
            "confidence": 0.0,
        },
        {
            "f1": 0.0,
            "type": "extractive",
            "unanswerable_gold": False,
            "abstained": True,
            "evidence_hit": True,
            "ms": 30,
            "confidence": 0.0,
        },
        {
            "f1": 0.0,
            "type": "unanswerable",
            "unanswerable_gold": True,
            "abstained": False,
            "evidence_hit": None,
            "ms": 20,
            "confidence": 0.1,
        },
        {
            "f1": 0.9,
            "type": "extractive",
            "unanswerable_gold": False,
            "abstained": False,
            "evidence_hit": False,
            "ms": 40,
            "confidence": 0.8,
        },
    ]
    s = qasper.summarize(rows)
    assert s["answer_f1"] == pytest.approx(0.475)
    assert s["answer_f1_se"] == pytest.approx(0.275)  # sample deviation 0.55 over two
    assert s["abstention_precision"] == 0.5 and s["abstention_recall"] == 0.5
    assert s["evidence_recall_at_5"] == 0.5 and s["p50_ms"] == 25.0
    assert s["confidence_auroc"] == 1.0  # the right answer is the more confident one
    rows[3]["confidence"] = 0.05  # planted: the right answer now looks less sure
    assert qasper.summarize(rows)["confidence_auroc"] == 0.0


def test_holds_answer_tells_the_right_sentence_from_a_wrong_one():
    answers = [ann(extractive_spans=["SQuAD", "TriviaQA"]), ann(free_form_answer="two QA datasets"), ann(yes_no=True)]
    # the right sentence, with many more words than the span: it holds the answer
    assert qasper.holds_answer("We train on SQuAD and evaluate on TriviaQA [1].", answers) is True
    # half of a written answer is enough (one of two spans; two of the free-form answer's three words)
    assert qasper.holds_answer("They use SQuAD.", answers) is True
    assert qasper.holds_answer("The QA datasets are small.", answers) is True
    # planted: a fluent sentence about something else holds nothing
    assert qasper.holds_answer("We use a learning rate of 0.01.", answers) is False
    # no written gold answer: not counted
    assert qasper.holds_answer("Yes.", [ann(yes_no=True), ann(unanswerable=True)]) is None
    assert qasper.token_recall("the the cat", "cat cat") == 0.5  # multiplicity counts


def test_summary_answer_holds_gold_counts_answered_written_questions_only():
    base = {"type": "extractive", "unanswerable_gold": False, "abstained": False, "evidence_hit": True, "ms": 1}
    rows = [
        {**base, "f1": 0.2, "answer_holds_gold": True},
        {**base, "f1": 0.0, "answer_holds_gold": False},
        {**base, "f1": 0.0, "answer_holds_gold": False},
        {**base, "f1": 1.0, "type": "yes_no", "answer_holds_gold": None},
    ]
    assert qasper.summarize(rows)["answer_holds_gold"] == pytest.approx(0.3333, abs=1e-4)


def test_auroc_counts_ties_half():
    assert qasper.auroc([0.5, 0.5], [0.5]) == 0.5
    assert qasper.auroc([], [0.1]) is None


def test_read_split_and_select(tmp_path):
    archive = tmp_path / "dev.tar.gz"
    qs = [
        {"paper_id": "p2", "question_id": "q2", "question": "Which? ", "answers": [ann(yes_no=False)]},
        {"paper_id": "p1", "question_id": "q1", "question": "What?", "answers": [ann(unanswerable=True)]},
    ]
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in (
            ("dev/questions.json", json.dumps(qs).encode()),
            ("dev/papers/p1.txt", b"# Paper One\n\n## Intro\n\nText."),
            ("dev/papers/p2.txt", b"# Paper Two\n\nMore text."),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    papers, items = qasper.read_split(archive)
    assert set(papers) == {"p1", "p2"} and [i.question for i in items] == ["Which?", "What?"]
    chosen, chosen_items = qasper.select(papers, items, 1)
    assert set(chosen) == {"p1"} and [i.question_id for i in chosen_items] == ["q1"]
    lines = qasper.manifest_lines(chosen)
    assert lines[0]["id"] == "qasper-p1" and lines[0]["title"] == "Paper One" and lines[0]["format"] == "markdown"
    with pytest.raises(FileNotFoundError, match="not found"):
        qasper.read_split(tmp_path / "missing.tar.gz")
