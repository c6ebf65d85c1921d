"""Every mechanical answer check fails on a planted wrong answer (and passes on the
right one): citations, numbers, supports (same sentence or table row, the right
column, the named things), abstention. No database, no model."""

from __future__ import annotations

from answer_fixtures import COMPOSITION_TABLE, COUNTY
from scirag_helpers import checks

SOURCES = [{"n": 1, "text": COUNTY}, {"n": 2, "text": COMPOSITION_TABLE}]
RIGHT = "Harlan County could supply 120,320 t of straw annually [1]. Barley straw contains 5.4 % ash [2]."


def run(text, expect_abstain=None):
    return checks.run_checks(text, SOURCES, expect_abstain=expect_abstain)


def test_the_right_answer_passes_every_check():
    chk = run(RIGHT, expect_abstain=False)
    assert chk["citations_ok"] and chk["numbers_ok"] and chk["supports_ok"] and chk["abstention_ok"]
    assert chk["claims"] == 2 and chk["unsupported"] == []


def test_citations_fail_on_a_citation_to_no_source_and_on_an_uncited_claim():
    assert not run(RIGHT.replace("[2]", "[4]"))["citations_ok"]
    assert not run("Harlan County could supply 120,320 t of straw annually.")["citations_ok"]


def test_numbers_fail_on_a_figure_no_cited_source_holds():
    chk = run(RIGHT.replace("120,320", "130,000"))
    assert not chk["numbers_ok"] and chk["ungrounded_numbers"] == ["130000"]


def test_supports_fails_on_a_figure_moved_to_another_rows_subject():
    # 5.4 is in the cited table, but in barley straw's row, not rice straw's
    chk = run("Rice straw contains 5.4 % ash [2].")
    assert chk["numbers_ok"] and not chk["supports_ok"] and chk["unsupported"] == [1]


def test_supports_fails_on_a_figure_from_another_column():
    # 17.1 is barley straw's lignin, not its ash
    chk = run("Barley straw contains 17.1 % ash [2].")
    assert chk["numbers_ok"] and not chk["supports_ok"]


def test_supports_fails_when_terms_and_number_are_only_scattered_over_the_chunk():
    # "Lomax County" and 58 % are both in source 1, in different sentences
    chk = run("Lomax County's principal residue is barley straw, 58 % of its supply [1].")
    assert chk["numbers_ok"] and chk["citations_ok"] and not chk["supports_ok"]


def test_supports_fails_on_a_claim_citing_a_source_that_does_not_say_it():
    chk = run("Harlan County could supply 120,320 t of straw annually [2].")
    assert not chk["supports_ok"]


def test_supports_reads_a_sentence_whose_formula_holds_a_bar():
    source = (
        "MuZero\n\nThe model predicts three future quantities: the policy pk ≈ π(at+k+1|o1, ..., ot), "
        "the value vk and the immediate reward rk, where γ is the discount of the environment. "
        "The parameters are trained end to end."
    )
    quote = "The model predicts three future quantities: the policy pk ≈ π(at+k+1|o1, ..., ot), the value vk and the immediate reward rk, where γ is the discount of the environment. [1]"
    assert checks.check_supports(quote, {1: source})["ok"]
    # the same sentence with a figure the source does not hold still fails
    assert not checks.check_supports(quote.replace("reward rk", "reward rk of 12 %"), {1: source})["ok"]


def test_supports_passes_a_table_row_read_with_its_header():
    chk = run("Residue: Rice straw; Lignin: 14.2 [2]")
    assert chk["supports_ok"] and chk["numbers_ok"]


def test_supports_reads_a_column_named_without_key_terms_when_the_claim_names_it():
    # "Value" carries no key term; the claim names the column word for word
    table = "Parameter | Value\nOuter step size | 0.25\nInner batch size | 25"
    ok = checks.run_checks("Parameter: Outer step size; Value: 0.25 [1]", [{"n": 1, "text": table}])
    assert ok["supports_ok"]
    # a figure from another row still fails, and so does a claim that does not name the column
    assert not checks.run_checks("Parameter: Outer step size; Value: 25 [1]", [{"n": 1, "text": table}])["supports_ok"]
    residue = "Residue | n | Ash\nBarley straw | 18 | 5.4"
    assert not checks.run_checks("Barley straw contains 18 % ash [1].", [{"n": 1, "text": residue}])["supports_ok"]


def test_abstention_fails_when_an_answerable_question_is_refused_and_the_reverse():
    refusal = "The sources do not contain the straw supply of Harlan County."
    assert not run(refusal, expect_abstain=False)["abstention_ok"]
    assert not run(RIGHT, expect_abstain=True)["abstention_ok"]
    assert run(refusal, expect_abstain=True)["abstention_ok"]


def test_table_parsing_keeps_labels_printed_on_their_own_line():
    table = "Model | Ar | Sw\nmT5 XXL | 76.9 | 84.4\nPaLM 540B |  | \n | 75.0 | 85.2\n(finetuned) |  | \nSum | 1 | 2"
    t = checks.parse_table(table)
    assert [r["label"] for r in t["rows"]] == ["mT5 XXL", "PaLM 540B (finetuned)", "Sum"]
    assert checks.row_columns(t, t["rows"][1]) == [("Ar", "75.0"), ("Sw", "85.2")]


def test_stacked_header_lines_join_column_wise():
    t = checks.parse_table("Model | #L | d | LR\n |  | model | \n30B | 48 | 7168 | 1.0e-4")
    assert t["columns"] == ["Model", "#L", "d model", "LR"]
    assert checks.row_columns(t, t["rows"][0])[1] == ("d model", "7168")
