"""The 'layout' PDF engine (issue 10), on small papers this test writes itself.

Each test pins one defect seen on real papers: tables with their caption and
row labels in one chunk, figures that are not tables, a true section tree,
clean text (hyphens, short lines, running heads), references marked, damaged
files read in part.  The PDFs are written by tests/data/make_pdfs.py (standard
Helvetica fonts: no font files or PDF library are needed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from make_pdfs import Page, write_pdf
from scirag.evaluation import pdf as evalpdf
from scirag.ingest.chunk import chunk_document
from scirag.ingest.parse import ParseError, parse_file
from scirag.ingest.pdf.engines import pdf_engine_name, pdf_engines
from scirag.ingest.pdf.layout import _clean, _join_lines, Line


def prose(page: Page, top: float, lines: list[str], x: float = 72) -> float:
    for line in lines:
        page.text(x, top, line)
        top += 12
    return top + 6


FILL = "the quick method reads every page of the paper in order and"


def paper(tmp_path: Path) -> Path:
    """Three pages: title, abstract, numbered sections with two heading lines in
    a row, a ruled table with caption below, a figure with tick labels, a
    paragraph cut by the page break, References, then an appendix."""
    p1, p2, p3 = Page(), Page(), Page()
    for p in (p1, p2, p3):
        p.text(200, 30, "Preprint under review at a venue", size=8)  # running head
    p1.text(150, 70, "A Study of Toy Tables", size=16, bold=True)
    p1.text(200, 95, "Ada Lovelace and Alan Turing", size=10)
    p1.text(72, 125, "Abstract", size=12, bold=True)
    top = prose(
        p1,
        145,
        [
            f"We study {FILL} keeps the result tables whole for later",
            f"questions, and {FILL} is end-",
            "to-end trainable and the method shows a clear hyphen-",
            "ation of words that were split at the line end.",
        ],
    )
    p1.text(72, top, "1 Introduction", size=12, bold=True)
    top = prose(
        p1, top + 20, [f"Tables matter because {FILL} answers come from the rows of the", f"tables, so {FILL} we"]
    )
    p1.text(250, top, "y = f(x)")  # a short content line
    top += 24
    p1.text(72, top, "2 Method", size=12, bold=True)
    p1.text(72, top + 18, "2.1 Setup", size=11, bold=True)  # two heading lines in a row
    top = prose(p1, top + 40, [f"The setup is simple: {FILL} the scores are in the table below."])
    # A booktabs table, caption below it.
    p1.rule(100, 450, top)
    p1.text(110, top + 4, "Model", bold=True).text(300, top + 4, "Acc", bold=True).text(380, top + 4, "F1", bold=True)
    p1.rule(100, 450, top + 18)
    rows = [("Baseline", "71.2", "60.1"), ("Ours (large)", "75.3", "64.0"), ("ResNet", "7.93", "5.10")]
    for i, (label, acc, f1) in enumerate(rows):
        p1.text(110, top + 22 + 13 * i, label).text(300, top + 22 + 13 * i, acc).text(380, top + 22 + 13 * i, f1)
    bottom = top + 22 + 13 * len(rows)
    p1.rule(100, 450, bottom)
    p1.text(100, bottom + 10, "Table 1: Accuracy of the toy models on the toy benchmark.")
    # A paragraph that runs over the page break.
    top = prose(
        p1, bottom + 40, [f"After the table {FILL} so the results hold for each of the", f"models because {FILL} the"]
    )
    p1.text(72, 700, "1 The code is at example.org under a permissive license.", size=8)  # a footnote
    top = prose(p2, 70, [f"method keeps working {FILL} finally ends here."])
    # A figure: tick labels in small type, caption below.
    for i, tick in enumerate(["0.2", "0.4", "0.6", "0.8"]):
        p2.text(120 + 80 * i, top + 60, tick, size=6)
    p2.text(300, top + 70, "epoch", size=6)
    p2.text(80, top + 20, "loss", size=6)
    p2.text(72, top + 90, "Figure 1: Loss of the toy models over training.")
    top = prose(p2, top + 115, [f"The figure shows {FILL} the loss falls for every model in the study."])
    p2.text(72, top, "3 Results", size=12, bold=True)
    p2.text(72, top + 18, "3.1 Main Numbers", size=11, bold=True)
    top = prose(p2, top + 40, [f"The main numbers show {FILL} ours is better than the baseline model."])
    p2.text(72, top, "References", size=12, bold=True)
    prose(
        p2,
        top + 20,
        [
            "[1] A. Author. A paper about tables. In Proceedings of a Venue, 2020.",
            "[2] B. Author. Another paper about figures. Journal of Things, 2021.",
        ],
    )
    p3.text(72, 70, "A Extra Results", size=12, bold=True)
    p3.text(72, 88, "A.1 More Tables", size=11, bold=True)
    prose(p3, 110, [f"The appendix adds {FILL} more results that confirm the main table."])
    return write_pdf(tmp_path / "toy-paper.pdf", [p1, p2, p3])


@pytest.fixture()
def chunks(tmp_path):
    doc = parse_file(paper(tmp_path), pdf_engine="layout")
    assert doc.parser == "layout" and doc.pages == 3 and doc.partial is None
    return chunk_document(doc, "A Study of Toy Tables")


def _bodies(chunks, kind=None):
    return [c.body for c in chunks if c.kind != "section" and (kind is None or c.kind == kind)]


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------


def test_table_is_one_chunk_with_caption_header_and_labelled_rows(chunks):
    tables = [c for c in chunks if c.is_table]
    assert len(tables) == 1
    lines = tables[0].body.split("\n")
    assert lines[0].startswith("Table 1: Accuracy of the toy models")
    assert lines[1] == "Model | Acc | F1"
    assert "Ours (large) | 75.3 | 64.0" in lines
    assert "ResNet | 7.93 | 5.10" in lines  # a short row is content, not noise


def test_table_rows_do_not_leak_into_prose(chunks):
    for body in _bodies(chunks, "prose"):
        assert "75.3" not in body and "Table 1:" not in body


def test_figure_tick_labels_are_not_a_table_and_caption_stays(chunks):
    assert sum(c.is_table for c in chunks) == 1
    text = "\n".join(_bodies(chunks))
    assert "Figure 1: Loss of the toy models" in text
    assert "0.4" not in text and "epoch" not in text


# ---------------------------------------------------------------------------
# Section tree
# ---------------------------------------------------------------------------


def test_numbered_headings_nest_by_number_even_on_consecutive_lines(chunks):
    paths = [c.section_path for c in chunks if c.kind == "section"]
    assert "2 Method > 2.1 Setup" in paths
    assert "3 Results > 3.1 Main Numbers" in paths
    assert not any("Ada Lovelace" in p or "Toy Tables" in p for p in paths)  # title and authors


def test_references_are_their_own_section_and_appendix_is_top_level(chunks):
    paths = [c.section_path for c in chunks if c.kind == "section"]
    assert "References" in paths
    assert "A Extra Results" in paths and "A Extra Results > A.1 More Tables" in paths
    refs = [c for c in chunks if c.kind != "section" and c.section_path == "References"]
    assert refs and all(c.is_reference for c in refs)
    assert not any(c.is_reference for c in chunks if c.section_path != "References")


def test_heading_scores_on_generated_paper(chunks):
    truth = evalpdf.GroundTruth(
        headings={
            "toy": [
                "Abstract",
                "1 Introduction",
                "2 Method",
                "2.1 Setup",
                "3 Results",
                "3.1 Main Numbers",
                "References",
                "A Extra Results",
                "A.1 More Tables",
            ]
        }
    )
    scored = evalpdf.score_paper("toy", evalpdf.records_from_chunks(chunks), truth)
    assert scored["headings_matched"] == 9 and scored["parent_ok_n"] == scored["numbered_sub"] == 3


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def test_hyphens_kept_in_compounds_joined_in_split_words(chunks):
    text = " ".join(_bodies(chunks, "prose"))
    assert "end-to-end" in text and "endto-end" not in text
    assert "hyphenation" in text


def test_short_content_lines_survive_and_running_heads_go(chunks):
    text = "\n".join(_bodies(chunks))
    assert "y = f(x)" in text
    assert "Preprint under review" not in text


def test_paragraph_joined_across_page_break(chunks):
    text = " ".join(_bodies(chunks, "prose"))
    assert "models because " + FILL + " the method keeps working" in text


def test_footnote_is_its_own_paragraph_and_does_not_cut_the_text(chunks):
    bodies = [p for b in _bodies(chunks, "prose") for p in b.split("\n\n")]
    assert "1 The code is at example.org under a permissive license." in bodies
    assert not any("example.org" in p and "method keeps working" in p for p in bodies)


def test_cid_codes_and_private_use_glyphs_removed():
    assert _clean("a(cid:12)b\ue001c") == "abc"


def test_join_lines_hyphen_rules():
    def line(t):
        return Line(
            1,
            "full",
            [
                {"text": w, "x0": i * 10.0, "x1": i * 10 + 8.0, "top": 0.0, "bottom": 10.0, "size": 10.0, "bold": False}
                for i, w in enumerate(t.split())
            ],
        )

    assert _join_lines([line("chain-"), line("of-thought prompting")]) == "chain-of-thought prompting"
    assert _join_lines([line("ligno-"), line("cellulosic biomass")]) == "lignocellulosic biomass"
    assert _join_lines([line("OPT-"), line("175B model")]) == "OPT-175B model"
    assert _join_lines([line("RNN-"), line("style models")]) == "RNN-style models"
    assert _join_lines([line("Multi-"), line("Layer Perceptrons")]) == "Multi-Layer Perceptrons"
    assert _join_lines([line("ends here."), line("Next one")]) == "ends here. Next one"


# ---------------------------------------------------------------------------
# Engines and damaged files
# ---------------------------------------------------------------------------


def test_engine_interface_names_engines_and_rejects_unknown(tmp_path, monkeypatch):
    assert {"layout", "pdfplumber", "pypdf"} <= set(pdf_engines())
    assert pdf_engine_name() == "layout"
    monkeypatch.setenv("SCIRAG_PDF_ENGINE", "pypdf")
    assert pdf_engine_name() == "pypdf"
    assert parse_file(paper(tmp_path)).parser == "pypdf"
    with pytest.raises(ParseError, match=r"unknown PDF engine 'nope'.*layout"):
        pdf_engine_name("nope")


def test_damaged_page_is_skipped_and_document_reported_partial(tmp_path, monkeypatch):
    from scirag.ingest.pdf import layout as pdf_layout

    real = pdf_layout.extract_page

    def flaky(page, number):
        if number == 2:
            raise ValueError("broken content stream")
        return real(page, number)

    monkeypatch.setattr(pdf_layout, "extract_page", flaky)
    doc = parse_file(paper(tmp_path), pdf_engine="layout")
    assert doc.partial and "1 of 3 pages" in doc.partial and "page 2" in doc.partial
    text = "\n".join(b.text for b in doc.blocks)
    assert "Table 1: Accuracy" in text and "A Extra Results" in text and "3 Results" not in text


def test_truncated_pdf_loads_the_pages_before_the_cut_and_is_partial(tmp_path):
    data = paper(tmp_path).read_bytes()
    # Cut inside page 3's content: pages 1-2 and their fonts are intact, the
    # end (xref table, trailer) is gone, so no reader opens the file as is.
    cut_at = data.index(b"A Extra Results")
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[:cut_at])
    doc = parse_file(cut, pdf_engine="layout")
    assert doc.parser == "layout"
    assert doc.partial and "truncated" in doc.partial
    text = "\n".join(b.text for b in doc.blocks)
    assert "Table 1: Accuracy" in text and "3 Results" in text
    assert "A Extra Results" not in text


def test_truncated_pdf_without_any_page_fails_naming_the_file(tmp_path):
    data = paper(tmp_path).read_bytes()
    cut = tmp_path / "stub.pdf"
    cut.write_bytes(data[:200])  # only the first objects: no page survives
    with pytest.raises(ParseError, match=r"stub\.pdf"):
        parse_file(cut, pdf_engine="layout")


# ---------------------------------------------------------------------------
# Scoring core
# ---------------------------------------------------------------------------


def test_table_scoring_needs_caption_and_cells_on_one_line():
    truth = {
        "paper": "p",
        "table": "Table 1",
        "page": 1,
        "caption_start": "Accuracy of the toy",
        "cells": [{"row": "Ours (large)", "value": "75.3"}, {"row": "ResNet", "value": "7.93"}],
    }
    good = evalpdf.ChunkRecord(
        "table",
        "Table 1: Accuracy of the toy models.\nModel | Acc\nOurs (large) | 75.3\nResNet | 7.93",
        is_table=True,
        page_start=1,
    )
    split = evalpdf.ChunkRecord(
        "table", "Table 1: Accuracy of the toy models.\nOurs (large) | ResNet\n75.3 | 7.93", is_table=True, page_start=1
    )
    no_caption = evalpdf.ChunkRecord("table", "Ours (large) | 75.3\nResNet | 7.93", is_table=True, page_start=1)
    assert evalpdf.table_hits(truth, [good]) == (True, True)
    assert evalpdf.table_hits(truth, [split]) == (False, False)
    assert evalpdf.table_hits(truth, [no_caption]) == (False, True)
    prose_only = evalpdf.ChunkRecord("prose", good.content, is_table=False)
    assert evalpdf.table_hits(truth, [prose_only]) == (False, False)
    junk = evalpdf.ChunkRecord("table", "ehT | waL | lliw", is_table=True, page_start=1)
    assert evalpdf.false_table_share([truth], [good, junk]) == (1, 2)


def test_heading_match_accepts_split_number_but_not_other_number():
    assert evalpdf.heading_matches("3 Background", "Background")
    assert evalpdf.heading_matches("Appendix A. Comparison to ACT", "A Comparison to ACT")
    assert not evalpdf.heading_matches("3 Background", "4 Background")
    assert not evalpdf.heading_matches("3 Background", "Related Work")


def test_multi_level_header_is_flattened_into_group_slash_column():
    from scirag.ingest.pdf.layout import _flatten_header

    def w(text, x0, x1, top):
        return {"text": text, "x0": x0, "x1": x1, "top": top, "bottom": top + 9, "size": 9.0, "bold": False}

    bounds = [(100, 140), (200, 220), (260, 280), (320, 340)]
    upper = [w("0-shot", 215, 265, 0), w("FEV", 322, 338, 0)]  # a group over 2 columns, a stacked line
    inner = [w("Model", 100, 130, 12), w("acc", 202, 218, 12), w("F1", 262, 272, 12), w("ACC", 322, 338, 12)]
    assert _flatten_header([upper, inner], bounds, 10.0) == ["Model", "0-shot / acc", "0-shot / F1", "FEV ACC"]
    assert _flatten_header([inner], bounds, 10.0) == ["Model", "acc", "F1", "ACC"]


def test_letter_spaced_decimals_in_a_cell_are_one_number():
    """Reptile's tables set "65.99" as three words; a cell must quote it as printed."""
    from scirag.ingest.pdf.layout import _cells

    def word(text, x0):
        return {"text": text, "x0": x0, "x1": x0 + 6 * len(text), "top": 100, "bottom": 108}

    row = [
        word("Reptile", 10),
        word("65", 200),
        word(".", 214),
        word("99", 220),
        word("±", 236),
        word("0", 246),
        word(".", 254),
        word("58%", 260),
        word("Table", 400),
        word("3", 432),
    ]
    cells = _cells(row, [(0, 120), (190, 320), (390, 450)])
    assert cells == ["Reptile", "65.99 ± 0.58%", "Table 3"]
