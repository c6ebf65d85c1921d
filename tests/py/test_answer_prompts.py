"""Prompt assembly: shipped templates, the three standing orders, intent guidance,
numbered source blocks with title, breadcrumb and position (no database)."""

from __future__ import annotations

import inspect
import re

import pytest

from answer_fixtures import demo_rows
from scirag_helpers import prompts
from scirag_helpers.answer import make_sources

ROOT = prompts.PROMPTS_DIR.parents[1]


@pytest.fixture(scope="module")
def intents():
    return prompts.default_intents()


def test_shipped_templates_keep_their_contracts():
    for kind in prompts.SLOTS:
        t = prompts.default_template(kind)
        assert t.kind == kind and t.system and t.body
    grounding = prompts.default_template("judge_grounding")
    assert "REFERENCE" not in grounding.slots() and "$REFERENCE" not in grounding.system
    assert {"ANSWER", "REFERENCE"} <= prompts.default_template("judge_correctness").slots()


def test_answer_system_carries_the_three_standing_orders():
    system = prompts.default_template("answer").system
    assert re.search(r"cite every claim", system, re.I)
    assert re.search(r"numbers and units", system, re.I)
    assert prompts.ABSTAIN_LEAD in system  # say so when the sources do not contain the answer


def test_the_sqitch_change_installs_exactly_the_shipped_files():
    deploy = (ROOT / "sql" / "schema" / "answer.sql").read_text()
    for kind in prompts.SLOTS:
        assert f"`cat domain/prompts/{kind}.txt`" in deploy
        assert f"`cat domain/prompts/{kind}.system.txt`" in deploy
    assert "`cat domain/prompts/intents.json`" in deploy


@pytest.mark.parametrize(
    "question,intent",
    [
        ("How much straw could Harlan County supply each year?", "QUANTITY"),
        (
            "What does a residue-to-product ratio express, and how can it be derived from the harvest index?",
            "DEFINITION",
        ),
        ("Compare the ash content of wheat and rice straw", "COMPARISON"),
        ("What are the limitations of the fixed residue ratio method?", "CRITIQUE"),
        ("Why does pellet durability drop at high moisture?", "MECHANISM"),
        ("When should a grower bale corn stover after harvest?", "APPLICATION"),
        ("Which participants were enrolled in the trial?", "STUDY_DETAIL"),
        ("Tell me about Lomax County", "GENERAL"),
    ],
)
def test_intent_classification(intents, question, intent):
    assert prompts.classify_intent(question, intents).intent == intent


def test_every_vulcanlab_intent_has_guidance(intents):
    names = {i.intent for i in intents}
    assert {"DEFINITION", "MECHANISM", "COMPARISON", "APPLICATION", "STUDY_DETAIL", "CRITIQUE"} <= names
    assert sum(1 for i in intents if not i.cues) == 1, "exactly one cue-less fallback"
    assert all(i.guidance.strip() for i in intents)


def test_quantity_questions_are_recognised():
    assert prompts.wants_quantity("What is the ash content of barley straw?")
    assert prompts.wants_quantity("How many cubic metres of methane does a tonne give?")
    assert not prompts.wants_quantity("Who wrote the county assessment?")


def test_source_blocks_are_numbered_with_breadcrumb_and_position():
    blocks = prompts.source_blocks(make_sources(demo_rows(), 5))
    heads = [l for l in blocks.splitlines() if re.match(r"^\[S\d+\] ", l)]
    assert heads == [  # VulcanLab's augmentation blocks: [S1] Source: title > section path (document, position)
        "[S1] Source: Residue Availability in Four Counties > 3 Results (county, lines 69-71)",
        "[S2] Source: Composition of Cereal Residues > 3.1 Structural composition (table) (composition, lines 40-45)",
        "[S3] Source: Harvest Logbook (logbook, lines 1-3)",
    ]
    # the chunker's title/section header is not repeated inside the block
    assert blocks.count("Residue Availability in Four Counties") == 1


def test_answer_prompt_has_sources_question_intent_and_guidance(intents):
    sources = make_sources(demo_rows(), 5)
    sources[2]["text"] = "Hauling cost $16.00 per dry tonne."
    q = "How much straw could Harlan County supply each year?"
    intent = prompts.classify_intent(q, intents)
    system, prompt = prompts.answer_prompt(prompts.default_template("answer"), q, sources, intent)
    assert f"Question: {q}" in prompt
    assert "Question intent: QUANTITY" in prompt and intent.guidance in prompt
    assert "[S1] Source: Residue Availability" in prompt and "[S3] Source: Harvest Logbook" in prompt
    assert "$16.00" in prompt, "a dollar sign in a source is shown as it is"
    assert "Cite every claim" in system


def test_templates_that_break_their_contract_are_refused():
    with pytest.raises(prompts.PromptError, match=r"\$REFERENCE"):
        prompts.Template("peek", "judge_grounding", "grade", "$QUESTION $ANSWER $SOURCES $REFERENCE").validate()
    with pytest.raises(prompts.PromptError, match=r"\$SOURCES"):
        prompts.Template("leak", "judge_correctness", "grade", "$ANSWER $REFERENCE $SOURCES").validate()
    with pytest.raises(prompts.PromptError, match="lacks"):
        prompts.Template("bare", "answer", "answer", "Question: $QUESTION").validate()


def test_grounding_prompt_has_no_way_to_take_a_reference():
    params = inspect.signature(prompts.grounding_prompt).parameters
    assert not any("ref" in p.lower() for p in params)
