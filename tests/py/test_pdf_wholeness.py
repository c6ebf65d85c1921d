"""Parsing faults seen on real papers (issue 25), on a paper this test writes itself
(tests/data/make_pdfs.py): numbers whose decimal point or minus sign the PDF sets in
another font or size stay whole, and small-capital headings are joined and become
sections, while a figure label in capitals never does."""

from __future__ import annotations

from pathlib import Path

from make_pdfs import H, Page, write_pdf
from scirag.ingest.chunk import chunk_document
from scirag.ingest.parse import parse_file
from scirag.ingest.pdf.layout import join_words

FILL = "the method reads every page of the paper in order and keeps the"


def small_caps(page: Page, x: float, top: float, number: str, words: list[str], size: float = 12) -> None:
    """'4.2 ATTENTION DISTANCE' as LaTeX sets small capitals: each word's first capital
    at the heading size, the rest as smaller capitals, glyphs touching."""
    runs = [(f"{number} ", size, 0)] if number else []
    for i, word in enumerate(words):
        lead = ("" if i == 0 else " ") + word[0]
        runs += [(lead, size, 0), (word[1:], size * 0.8, 0)]
    page.text_at(x, H - top - size, runs, size)


def paper(tmp_path: Path) -> Path:
    p = Page()
    p.text(150, 60, "Seeing Through Small Capitals", size=16, bold=True)
    p.text(200, 85, "Ada Lovelace and Alan Turing", size=10)
    small_caps(p, 72, 120, "", ["ABSTRACT"])
    p.text(72, 140, f"We study {FILL} numbers whole for every later question.")
    small_caps(p, 72, 170, "1", ["INTRODUCTION"])
    # "28.4" and "0.1" with the point in another size, "10-9" with a raised minus (the
    # writer's fonts are Latin-1: a hyphen-minus stands for the math minus): the
    # extractor cuts each into three words with no gap between them
    p.text_at(
        72,
        H - 200,
        [
            ("The big model reaches 28", 10, 0),
            (".", 10.5, 0),
            ("4 BLEU with dropout 0", 10, 0),
            (".", 10.5, 0),
            ("1 and a rate of 10", 10, 0),
            ("-9", 7, 4),
            (" per step.", 10, 0),
        ],
        10,
    )
    p.text(72, 214, f"The results show that {FILL} scores in one place.")
    small_caps(p, 72, 250, "2", ["PRE-TRAINING"])
    p.text(72, 272, f"Pre-training {FILL} weights for the fine-tuning runs.")
    small_caps(p, 72, 300, "2.1", ["ATTENTION", "DISTANCE"], size=10)
    p.text(72, 320, f"The attention distance {FILL} heads of each layer apart.")
    # a figure: a label in capitals (one size) and tick labels, caption below
    p.text(250, 360, "ENCODER", size=9)
    for i, tick in enumerate(["0.2", "0.4", "0.6"]):
        p.text(200 + 60 * i, 420, tick, size=7)
    p.text(72, 440, "Figure 1: The encoder and its attention distance per layer.")
    p.text(72, 470, f"After the figure {FILL} text of the section going.")
    return write_pdf(tmp_path / "caps.pdf", [p], {"Title": "Seeing Through Small Capitals"})


def test_words_whose_glyphs_touch_are_one_word():
    w = lambda text, x0, x1: {"text": text, "x0": x0, "x1": x1}
    assert join_words([w("28", 0, 10), w(".", 10, 12.5), w("4", 12.5, 18), w("BLEU", 21, 40)]) == "28.4 BLEU"
    assert join_words([w("10", 0, 10), w("−", 10.2, 14), w("9", 14, 18)]) == "10−9"
    assert join_words([w("(1", 0, 8), w("−", 10.4, 16), w("λ)", 18.4, 24)]) == "(1 − λ)"  # real spaces stay


def test_numbers_stay_whole_and_small_caps_headings_are_sections(tmp_path):
    doc = parse_file(paper(tmp_path))
    text = "\n".join(b.text for b in doc.blocks)
    assert "reaches 28.4 BLEU with dropout 0.1 and a rate of 10-9 per step" in text, text
    for broken in ("28 . 4", "0 . 1", "10 - 9", "10 -9", "A TTENTION", "P RE"):
        assert broken not in text
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert (1, "1 INTRODUCTION") in headings and (1, "2 PRE-TRAINING") in headings, headings
    assert (2, "2.1 ATTENTION DISTANCE") in headings, headings
    assert not any("ENCODER" in t for _, t in headings)  # a figure label is never a section
    chunks = chunk_document(doc, "Seeing Through Small Capitals")
    paths = {c.section_path for c in chunks if c.kind != "section" and "attention distance" in c.content}
    assert paths == {"2 PRE-TRAINING > 2.1 ATTENTION DISTANCE"}, paths


def test_a_title_stops_before_the_author_block(tmp_path):
    """FlashAttention sets its authors, emails and date in large type right under the
    title: the title must not swallow them, and the names become the authors."""
    from scirag.ingest.pdf.meta import read_pdf_meta
    from test_pdfmeta import make_pdf, paper_page

    pdf = make_pdf(
        tmp_path / "flash.pdf",
        [
            paper_page(
                ["FlashAttention: Fast and Memory-Efficient", "Exact Attention with IO-Awareness"],
                [
                    [
                        ("Tri Dao", 14, 0),
                        ("*", 9, 5),
                        (", Daniel Y. Fu", 14, 0),
                        ("*", 9, 5),
                        (", Stefano Ermon", 14, 0),
                    ],
                    "{trid, danfu}@cs.stanford.edu, ermon@stanford.edu",
                    "June 24, 2022",
                ],
                author_size=14,
            )
        ],
    )
    meta = read_pdf_meta(pdf)
    assert meta.title == "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness"
    assert meta.authors == ["Tri Dao", "Daniel Y. Fu", "Stefano Ermon"]


def test_author_lines_are_told_from_title_lines():
    from scirag.ingest.pdf.meta import _author_block

    assert _author_block("Tri Dao, Daniel Y. Fu, Stefano Ermon")
    assert _author_block("June 24, 2022") and _author_block("{trid}@cs.stanford.edu")
    for title in ("Exact Attention with IO-Awareness", "Learning to Bale Straw with", "Attention Is All You Need"):
        assert not _author_block(title)


def test_text_units_keep_the_numbers_whole(tmp_path):
    """The sentences answers quote and checks read (scirag_helpers.text) hold the whole numbers."""
    from scirag_helpers.text import sentences, units

    doc = parse_file(paper(tmp_path))
    chunks = chunk_document(doc, "Seeing Through Small Capitals")
    body = next(c.body for c in chunks if c.kind != "section" and "BLEU" in c.content)
    said = [s for s in sentences(body) if "BLEU" in s]
    assert said == ["The big model reaches 28.4 BLEU with dropout 0.1 and a rate of 10-9 per step."], said
    assert any("28.4" in body[u.start : u.end] for u in units(body))
