"""Mechanical answer checks (no model): citations point at provided sources, numbers
appear in cited sources, unanswerable questions are abstained on. Each check is shown
catching a planted violation."""

from __future__ import annotations

import pytest

from scirag_helpers import checks

SOURCES = [
    {"n": 1, "text": "In total Harlan County could supply about 120,300 dry tonnes of straw per year."},
    {"n": 2, "text": "Barley straw contains 5.4 % ash; the removal fraction is 0.40 and haul cost $16.00 per tonne."},
    {"n": 3, "text": "Emission factors: PM2.5 8.6 g/kg, CH4 3.1 g/kg, 1,099 samples."},
]


def run(text, expect=None):
    return checks.run_checks(text, SOURCES, expect_abstain=expect)


def test_a_clean_answer_passes_every_check():
    r = run("Harlan County could supply about 120,300 dry tonnes a year [1], and barley straw has 5.4 % ash [2].")
    assert r["citations_ok"] and r["numbers_ok"] and r["uncited_sentences"] == 0
    assert r["cited"] == [1, 2] and r["numbers"] == 2


def test_planted_citation_to_a_source_that_was_not_provided():
    r = run("Harlan County could supply about 120,300 dry tonnes a year [4].")
    assert not r["citations_ok"] and r["invalid_citations"] == [4]


def test_an_answer_that_cites_nothing_does_not_pass():
    r = run("Harlan County could supply about 120,300 dry tonnes of straw a year.")
    assert not r["citations_ok"] and r["uncited_sentences"] == 1


def test_planted_number_that_no_cited_source_contains():
    r = run("Harlan County could supply about 130,000 dry tonnes of straw a year [1].")
    assert not r["numbers_ok"] and r["ungrounded_numbers"] == ["130000"]


def test_a_number_from_an_uncited_source_is_not_grounded():
    r = run("Barley straw has 5.4 % ash [1].")  # 5.4 is in source 2, but the answer cites 1
    assert r["ungrounded_numbers"] == ["5.4"]


def test_numbers_are_compared_by_value_and_identifiers_are_not_numbers():
    r = run(
        "The removal fraction is 0.4 and hauling costs $16 per tonne [2]; PM2.5 and CH4 factors were measured "
        "on 1099 samples [3]."
    )
    assert r["numbers_ok"], r["ungrounded_numbers"]
    assert checks.numbers_in("PM2.5, CH4, m3 and CO2") == []


@pytest.mark.parametrize(
    "text,cited",
    [
        ("a [1, 2] b", [1, 2]),
        ("a [1-3] b", [1, 2, 3]),
        ("a [S2] b", [2]),
        ("a [1][3] b", [1, 3]),
        ("a [2; 3]", [2, 3]),
    ],
)
def test_citation_forms(text, cited):
    assert checks.citation_numbers(text) == cited


def test_planted_unanswerable_question_must_be_abstained_on():
    abstain = "The sources do not contain a straw-to-grain ratio for sorghum."
    invent = "Sorghum has a straw-to-grain ratio of 1.1 [1]."
    assert run(abstain, expect=True)["abstention_ok"]
    assert run(abstain, expect=True)["citations_ok"], "an abstention needs no citation"
    assert not run(invent, expect=True)["abstention_ok"]
    assert not run(abstain, expect=False)["abstention_ok"], "abstaining on an answerable question is wrong too"


def test_a_cited_answer_that_notes_a_gap_later_is_not_an_abstention():
    text = (
        "Harlan County could supply about 120,300 dry tonnes a year [1]. The sources do not contain a figure for oats."
    )
    assert not checks.is_abstention(text)
    assert checks.is_abstention("The sources do not contain the answer. They do give barley ash: 5.4 % [2].")


def test_citations_after_the_full_stop_stay_with_their_sentence():
    assert checks.sentences("Supply is 120,300 t. [1] Ash is 5.4 %. [2]") == [
        "Supply is 120,300 t. [1]",
        "Ash is 5.4 %. [2]",
    ]
    assert checks.uncited_claims("Supply is about 120,300 dry tonnes. [1] Ash is high in rice straw overall.") == [
        "Ash is high in rice straw overall."
    ]
