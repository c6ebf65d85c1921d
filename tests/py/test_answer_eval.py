"""`scirag eval answer` on question sets with acceptable answers (JSONL): loading,
the README normalisation, answer correct / cited chunk holds the answer, and the
near-miss unanswerable set shipped in domain/ (no database)."""

from __future__ import annotations

import json

import pytest

from scirag.evaluation import qa as evalqa
from scirag.db import ROOT


def write(tmp_path, items, name="q.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(x) for x in items) + "\n", encoding="utf-8")
    return p


def test_jsonl_questions_carry_answers_paper_and_tags(tmp_path):
    p = write(
        tmp_path,
        [
            {
                "paper": "p1",
                "id": "p1-q1",
                "question": "What?",
                "answers": ["65.99", "65.99 ± 0.58%"],
                "where": "Table 1",
            },
            {"paper": "p1", "id": "p1-u1", "question": "What else?", "answers": []},
        ],
    )
    q1, u1 = evalqa.load_questions(p)
    assert q1.answers == ["65.99", "65.99 ± 0.58%"] and q1.reference_documents == ["p1"]
    assert "table" in q1.tags and not q1.unanswerable
    assert u1.unanswerable and u1.reference_documents == [] and u1.answers == []


@pytest.mark.parametrize(
    "line,message",
    [
        ("not json", "not JSON"),
        ({"id": "x"}, "needs an id and a question"),
        ({"id": "x", "question": "q", "answers": "65.99"}, "list of non-empty strings"),
        ({"id": "x", "question": "q", "answers": ["1"], "tags": ["unanswerable"]}, "has no answers"),
    ],
)
def test_bad_question_lines_are_refused_with_the_line_named(tmp_path, line, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(line if isinstance(line, str) else json.dumps(line), encoding="utf-8")
    with pytest.raises(evalqa.QuestionError, match=message):
        evalqa.load_questions(p)


def test_duplicate_ids_across_files_are_refused(tmp_path):
    a = write(tmp_path, [{"id": "x", "question": "q", "answers": ["1"]}], "a.jsonl")
    b = write(tmp_path, [{"id": "x", "question": "q2", "answers": []}], "b.jsonl")
    with pytest.raises(evalqa.QuestionError, match="duplicate"):
        evalqa.load_question_files([a, b])


def test_answers_match_after_nfkc_quote_dash_and_whitespace_normalisation():
    assert evalqa.holds_answer("by masking the logit to\n -∞ during search", ["masking the logit to −∞"])
    assert evalqa.holds_answer("the “GPT-2 byte level BPE  tokenizer”", ["GPT-2 byte level BPE tokenizer"])
    assert evalqa.holds_answer("trained on OPT-\n175B", ["OPT-175B"])
    assert not evalqa.holds_answer("65.9 ± 0.58%", ["65.99"])
    # cell values compare without whitespace (the papers' README), never inside a longer number
    assert evalqa.holds_answer("Reptile: 65 . 99 ± 0 . 58%", ["65.99"])
    assert not evalqa.holds_answer("Reptile: 165.99", ["65.99"]) and not evalqa.holds_answer("0.7201", ["0.720"])


def test_answer_correct_and_cited_chunk_holds_the_answer():
    q = evalqa.Question("x", "q?", answers=["65.99"], reference_documents=["p"])
    result = {
        "answer": "Reptile + Transduction; 5-shot 5-way: 65.99 ± 0.58% [1]",
        "citations": [{"n": 1, "chunk_id": 7}],
        "retrieval": [
            {"chunk_id": 7, "content": "Reptile + Transduction | 49.97 | 65.99 ± 0.58%"},
            {"chunk_id": 8, "content": "other"},
        ],
        "prompt_sources": [],
    }
    assert evalqa.answer_scores(result, q, False, False) == (True, True)
    wrong = dict(result, answer="MAML: 63.11 [1]", citations=[{"n": 2, "chunk_id": 8}])
    assert evalqa.answer_scores(wrong, q, False, False) == (False, False)
    # an abstention on an answerable question is wrong; an unanswerable question is not scored
    assert evalqa.answer_scores(result, q, False, True) == (False, False)
    assert evalqa.answer_scores(result, q, True, True) == (None, None)


def test_a_yes_no_question_is_right_only_when_the_answer_leads_with_its_verdict():
    q = evalqa.Question("y", "Does it need a GPU?", answers=["No"], reference_documents=["p"])
    said = {"citations": [{"n": 1, "chunk_id": 7}], "retrieval": [], "prompt_sources": []}
    # "no" occurs in "not" and "know": a substring match would call every answer right
    yes = dict(said, answer="Yes.\n\nIt does not need a GPU and we know why. [1]")
    assert evalqa.answer_scores(yes, q, False, False) == (False, True)
    assert evalqa.answer_scores(dict(said, answer="No.\n\nIt needs neither a GPU. [1]"), q, False, False)[0]
    assert evalqa.answer_scores(dict(said, answer="Nothing says so. [1]"), q, False, False)[0] is False
    assert evalqa.yes_no_verdict(["Yes"]) == "yes" and evalqa.yes_no_verdict(["Yes", "No"]) is None
    assert evalqa.yes_no_verdict(["yes, with a GPU"]) is None


def test_the_summary_counts_right_answers_per_tag():
    rows = [
        {"tags": ["number", "dev"], "answer_correct": True},
        {"tags": ["number", "hold"], "answer_correct": False},
        {"tags": ["unanswerable"], "answer_correct": None},
    ]
    assert evalqa.correct_by_tag(rows) == {"dev": (1, 1), "hold": (0, 1), "number": (1, 2)}


def test_the_reader_questions_are_split_before_use_and_tagged_by_kind():
    qs = evalqa.load_questions(ROOT / "domain" / "papers_reader_questions.jsonl")
    kinds = {"number", "phrase", "list", "definition", "yes_no"}
    assert len(qs) == 158 and all(q.answers and not q.unanswerable for q in qs)
    # two rounds: 98 questions (49 dev, 49 hold), then 60 more by two new writers (30 dev2, 30 hold2)
    halves = {"dev", "hold", "dev2", "hold2"}
    assert all(len(set(q.tags) & kinds) == 1 and len(set(q.tags) & halves) == 1 for q in qs)
    assert [sum(h in q.tags for q in qs) for h in ("dev", "hold", "dev2", "hold2")] == [49, 49, 30, 30]
    assert len({q.id for q in qs}) == len(qs)
    # a yes/no question is scored by its verdict, every other by its span
    assert all((evalqa.yes_no_verdict(q.answers) is not None) == ("yes_no" in q.tags) for q in qs)


def test_the_questions_on_a_tenth_paper_are_tagged_by_kind_and_hold_both_verdicts():
    # written on ../shared/data/pdfs/scitab_emnlp2023.pdf, a paper no rule was written for
    qs = evalqa.load_questions(ROOT / "domain" / "scitab_paper_questions.jsonl")
    kinds = {"number", "phrase", "list", "definition", "yes_no"}
    assert len(qs) == 24 and all(q.answers and "scitab1" in q.tags for q in qs)
    assert all(len(set(q.tags) & kinds) == 1 for q in qs) and len({q.id for q in qs}) == 24
    verdicts = [evalqa.yes_no_verdict(q.answers) for q in qs if "yes_no" in q.tags]
    assert sorted(verdicts) == ["no", "no", "no", "yes", "yes", "yes"]


def test_the_questions_on_two_qasper_train_papers_are_tagged_by_kind_and_paper():
    # written on papers 2004.01670 and 2003.14026 of the QASPER train archive, kept unread
    qs = evalqa.load_questions(ROOT / "domain" / "qasper_reader_questions.jsonl")
    kinds = {"number", "phrase", "list", "definition", "yes_no"}
    assert len(qs) == 24 and all(q.answers and "qasper1" in q.tags for q in qs)
    assert all(len(set(q.tags) & kinds) == 1 for q in qs) and len({q.id for q in qs}) == 24
    assert sorted(evalqa.yes_no_verdict(q.answers) for q in qs if "yes_no" in q.tags) == ["no"] * 3 + ["yes"] * 3


def test_the_shipped_near_miss_set_has_at_least_12_unanswerable_questions():
    qs = evalqa.load_questions(ROOT / "domain" / "papers_unanswerable.jsonl")
    assert len(qs) >= 12 and all(q.unanswerable and not q.answers for q in qs)
    assert len({q.id for q in qs}) == len(qs)


def test_table_cell_questions_are_written_from_spot_cells_and_load_as_table_questions(tmp_path):
    import subprocess
    import sys

    line = {
        "paper": "p1",
        "table": "Table 2",
        "caption_start": "Results on NQ320k. Reporting hits@1 and",
        "cells": [
            {"row": "BM25", "col": "10", "value": "59.0", "col_group": "hits@k"},
            {"row": "SEAL", "col": "1", "value": "26.3 ± 0.2", "row_context": "Beam 15"},
        ],
    }
    tables = write(tmp_path, [line], "tables.jsonl")
    out = tmp_path / "cells.jsonl"
    script = ROOT / "scripts" / "table_cell_questions.py"
    subprocess.run([sys.executable, str(script), str(tables), str(out)], check=True, capture_output=True)
    a, b = evalqa.load_questions(out)
    assert a.question == "Results on NQ320k: what is the hits@k 10 of BM25?" and a.answers == ["59.0"]
    assert b.question == "Results on NQ320k: what is the 1 of SEAL (Beam 15)?" and b.answers == ["26.3 ± 0.2", "26.3"]
    assert "table" in a.tags and a.reference_documents == ["p1"]
    subprocess.run([sys.executable, str(script), str(tables), str(out), "--form", "bare"], check=True)
    assert evalqa.load_questions(out)[0].question == "What is the hits@k 10 of BM25?"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"paper": "p1"}\n', encoding="utf-8")
    run = subprocess.run([sys.executable, str(script), str(bad), str(out)], capture_output=True, text=True)
    assert run.returncode == 2 and "line 1" in run.stderr
