"""The offline extractive answerer: quotes the best evidence, prefers numbers and
units for quantity questions, cites each piece, joins two hops, abstains when the
evidence is too weak (no database, no model)."""

from __future__ import annotations

import re

from answer_fixtures import BEDDING, COMPOSITION_TABLE, COUNTY, WEATHER, demo_rows, row
from scirag_helpers import checks, prompts
from scirag_helpers.answer import extractive_answer, make_sources, terms, units_of


def sources(*rows_):
    return make_sources(list(rows_), 5)


def test_quantity_question_gets_the_sentence_with_number_and_unit():
    src = sources(row(1, BEDDING, ext="bedding", title="Straw Uses"))
    out = extractive_answer("What is the ash content of barley straw?", src, quantity=True)
    assert not out.abstained
    assert out.text == "Barley straw contains 5.4 % ash on a dry-matter basis, less than oat straw. [1]"


def test_a_table_row_answers_with_its_label_and_the_asked_column():
    src = sources(row(1, COMPOSITION_TABLE, ext="composition", title="Composition", is_table=True))
    out = extractive_answer("How much lignin does rice straw contain?", src, quantity=True)
    assert out.text == "Residue: Rice straw; Lignin: 14.2 [1]"


def test_a_units_line_under_the_header_joins_the_column_names():
    table = "Feedstock | Moisture | Durability\n(% w.b.) | (%)\nBarley straw | 12 | 96.4\nWheat straw | 12 | 95.6"
    [u, _] = units_of({"n": 1, "text": table, "title": "T", "section_path": ""})
    assert u.text == "Feedstock: Barley straw; Moisture (% w.b.): 12; Durability (%): 96.4"


def test_two_hops_are_joined_through_the_entity_the_first_names():
    out = extractive_answer(
        "What is the ash content of the main crop residue in Harlan County?",
        make_sources(demo_rows(), 5),
        quantity=True,
    )
    assert not out.abstained
    assert "principal residue is barley straw" in out.text
    assert "Residue: Barley straw; Ash: 5.4 [2]" in out.text
    assert checks.citation_numbers(out.text) == [1, 2]


def test_every_quote_is_verbatim_and_cited_to_its_own_source():
    src = make_sources(demo_rows(), 5)
    out = extractive_answer("How much straw could Harlan County supply each year?", src, quantity=True)
    for quote, n in re.findall(r"(.+?) \[(\d+)\](?: |$)", out.text):
        assert quote.strip() in src[int(n) - 1]["text"]
    chk = checks.run_checks(out.text, src)
    assert chk["citations_ok"] and chk["numbers_ok"], chk


def test_abstains_when_the_question_names_what_no_document_in_scope_mentions():
    src = make_sources(demo_rows(), 5)
    out = extractive_answer(
        "What straw-to-grain ratio should be used for grain sorghum in Harlan County?",
        src,
        quantity=True,
        unknown_words={"sorghum"},
    )
    assert out.abstained and out.units == []
    assert out.text.startswith(prompts.ABSTAIN_LEAD) and '"sorghum"' in out.text
    assert checks.is_abstention(out.text)


def test_abstains_when_the_evidence_is_too_weak():
    src = sources(row(1, WEATHER, ext="logbook", title="Harvest Logbook"))
    out = extractive_answer("What hydrogen yield does dark fermentation of barley straw achieve?", src, quantity=True)
    assert out.abstained and out.reason == "evidence too weak"
    assert checks.run_checks(out.text, src, expect_abstain=True)["abstention_ok"]


def test_no_sources_means_abstention():
    out = extractive_answer("How much straw is there?", [], quantity=True)
    assert out.abstained and out.text.startswith(prompts.ABSTAIN_LEAD)


def test_overlap_between_chunks_is_quoted_once():
    src = sources(
        row(1, COUNTY, ext="county", title="A", chunk_id=1, document_id=1),
        row(2, COUNTY, ext="county", title="A", chunk_id=2, document_id=1),
    )
    out = extractive_answer("How much straw could Harlan County supply annually?", src, quantity=True)
    assert out.text.count("120,320") == 1 and "[2]" not in out.text


def test_terms_normalise_units_synonyms_and_word_forms():
    assert set(terms("cubic metres of methane per tonne")) == {"m3", "methan", "tonne"}
    assert terms("durability")[0] == terms("durable")[0]
    assert terms("maize") == terms("corn")
    assert terms("soil carbon starts to fall") == terms("soil carbon declining")
