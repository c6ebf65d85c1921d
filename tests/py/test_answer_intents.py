"""One intent classifier (issue 16): scirag.classify_intent in SQL is the answerer's
classifier (scirag_helpers.prompts over the scirag.answer_intents rows), so SQL and
Python agree, every class is reachable, and the reranker knows every class."""

from __future__ import annotations

import json

import pytest
import yaml

from scirag_helpers import prompts, rerank
from scirag_helpers.prompts import INTENTS

ROOT = prompts.PROMPTS_DIR.parents[1]

# At least one question per class, and VulcanLab's examples.
QUESTIONS = {
    "What are criticisms of the DSM-5?": "CRITIQUE",
    "What are the limitations of the removal experiment?": "CRITIQUE",
    "Compare CBT and DBT approaches": "COMPARISON",
    "What is the difference between wheat and barley straw?": "COMPARISON",
    "What is lignin?": "DEFINITION",
    "Define harvest index": "DEFINITION",
    "How much straw could Harlan County supply each year?": "QUANTITY",
    "What is the ash content of rice straw?": "QUANTITY",
    "Why does alkaline pretreatment raise the methane yield?": "MECHANISM",
    "When should you use exposure therapy?": "APPLICATION",
    "What were the findings of the 2018 Smith study?": "STUDY_DETAIL",
    "Tell me about straw": "GENERAL",
    "": "GENERAL",
}


def demo_questions() -> list[str]:
    data = yaml.safe_load((ROOT / "domain" / "questions.yaml").read_text(encoding="utf-8"))
    return [q["question"] for q in data["questions"]]


def test_the_shipped_rules_hold_exactly_the_classes_in_order():
    rows = json.loads((prompts.PROMPTS_DIR / "intents.json").read_text(encoding="utf-8"))
    assert tuple(i.intent for i in prompts.intents_from_rows(rows)) == INTENTS
    assert [r["intent"] for r in rows if not r["cues"]] == ["GENERAL"]  # the one fallback


@pytest.mark.parametrize("question,intent", QUESTIONS.items())
def test_python_classes(question, intent):
    assert prompts.classify_intent(question, prompts.default_intents()).intent == intent


def test_every_class_is_reachable():
    got = {prompts.classify_intent(q, prompts.default_intents()).intent for q in QUESTIONS}
    assert got == set(INTENTS)


def test_the_reranker_knows_every_class():
    """Every class but GENERAL has a content shape it prefers (a non-zero bias for
    some chunk), and the rerank option "intent" accepts exactly the classes."""
    shapes = [
        (
            {"kind": "section", "level": 2, "is_table": True, "section_path": "Discussion"},
            " ".join(["word"] * 60) + "\n- a\n- b\n| x | 1 | 2 | 3",
        ),
        ({"kind": "prose", "level": 4, "section_path": "Results"}, "word " * 300 + " 12 34 56"),
    ]
    for intent in INTENTS:
        best = max(rerank.intent_match(intent, shape, text) for shape, text in shapes)
        assert (best > 0) == (intent != "GENERAL"), intent
        assert rerank.parse_options({"intent": intent.lower()})["intent"] == intent
    with pytest.raises(rerank.OptionsError, match="QUANTITY"):
        rerank.parse_options({"intent": "NOT_A_CLASS"})


def test_sql_and_python_agree(admin_conn, reader_conn):
    """The same rules, the same answer, on the seed questions and the examples; the
    table holds the shipped classes in the shipped order."""
    rows = admin_conn.execute("SELECT intent, priority, cues, guidance FROM scirag.answer_intents").fetchall()
    table = prompts.intents_from_rows([dict(zip(("intent", "priority", "cues", "guidance"), r)) for r in rows])
    assert tuple(i.intent for i in table) == INTENTS
    questions = list(QUESTIONS) + demo_questions()
    assert len(questions) >= 30
    sql = [reader_conn.execute("SELECT scirag.classify_intent(%s)", (q,)).fetchone()[0] for q in questions]
    py = [prompts.classify_intent(q, table).intent for q in questions]
    assert sql == py
    assert set(sql) == set(INTENTS)
    assert reader_conn.execute("SELECT scirag.classify_intent(NULL)").fetchone()[0] == "GENERAL"
