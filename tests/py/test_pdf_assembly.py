"""How text is put together from a PDF's characters and words (issue 25, items 5-7).

Each test pins one way real papers broke, on the objects the code receives from
pdfplumber (word and character dicts built here) and on a paper written by this test
(tests/data/make_pdfs.py) with the same traits:

* item 5: a number cut at a font or size change stays whole in prose and in table
  cells ('28.4', '3 × 10−3'), and the symbols TeX's maths fonts carry as bare glyph
  codes ('(cid:15)' in CMMI, '(cid:0)' in CMSY) are read as the characters they are
  (ϵ, −) instead of vanishing ('where = 0.001' read for 'where ϵ = 0.001');
* item 6: small capitals are letter-spaced (about 0.05 em between glyphs: 0.6 pt in a
  12 pt heading, more in a title), so gluing a split word must be judged in the type's
  size, not in absolute points; such headings then make the section tree, while a
  figure's labels never do;
* item 7: a title stops where the author block starts, even when the authors are set
  large, without commas, e-mails or a date: the block sits further from the title than
  the title's own lines sit from each other.
"""

from __future__ import annotations

from pathlib import Path

from make_pdfs import Page, write_pdf
from scirag.ingest.chunk import chunk_document
from scirag.ingest.parse import parse_file
from scirag.ingest.pdf.layout import PageData, extract_page, join_words, layout

BODY = "the method reads every page of the paper in order and keeps each"


def word(
    text: str, x0: float, x1: float, size: float = 10.0, top: float = 100.0, bold: bool = False, rise: float = 0
) -> dict:
    """A word as pdf_layout.extract_page keeps it (pdfplumber's word, size and weight), on
    the line whose 10 pt text spans top..top+10; rise lifts a superscript off that line."""
    bottom = top + 10 - rise
    return {"text": text, "x0": x0, "x1": x1, "top": bottom - size, "bottom": bottom, "size": size, "bold": bold}


# ---------------------------------------------------------------------------
# Item 5: numbers and symbols
# ---------------------------------------------------------------------------


def test_touching_is_judged_in_the_type_size():
    """SciTab's title as pdfplumber cuts it: 'S' 14.3 pt, 'CI' 11.5 pt, 'T', 'AB', ':'
    with 0.72 pt between glyphs (letter-spaced small capitals), real spaces 3.6 pt."""
    title = [
        word("S", 96.1, 104.1, 14.3),
        word("CI", 104.8, 118.3, 11.5),
        word("T", 119.0, 128.5, 14.3),
        word("AB", 128.1, 144.8, 11.5),
        word(":", 145.1, 149.9, 14.3),
        word("A", 154.3, 164.7, 14.3),
        word("Challenging", 168.3, 242.4, 14.3),
    ]
    assert join_words(title) == "SCITAB: A Challenging"
    # a thin space in running maths (0.16 em) and a tightly justified space (0.2 em) stay
    assert join_words([word("minimize", 0, 40, 11), word("E", 41.8, 48, 11)]) == "minimize E"
    assert join_words([word("the", 0, 14), word("model", 16.0, 40)]) == "the model"


def test_table_cells_keep_numbers_whole():
    """Reptile's hyperparameter table: '10' then a superscript '−' '3' in a smaller size,
    glyphs touching; the cell must read '3 × 10−3' as the line does."""
    caption = "Table 1: Hyperparameters of the runs in the few-shot experiments."
    words = []
    x = 72.0
    for t in caption.split():
        words.append(word(t, x, x + 5.0 * len(t), top=100))
        x += 5.0 * len(t) + 2.5
    words += [word("Parameter", 150, 195, top=118, bold=True), word("Value", 320, 345, top=118, bold=True)]
    for i, (label, value) in enumerate([("Inner learning rate", "0.001"), ("Outer step size", "0.1")]):
        top = 132 + 13 * i
        x = 150.0
        for t in label.split():
            words.append(word(t, x, x + 5.0 * len(t), top=top))
            x += 5.0 * len(t) + 2.5
        words.append(word(value, 320, 320 + 5.0 * len(value), top=top))
    top = 158
    words += [
        word("Meta", 150, 170, top=top),
        word("step", 172.5, 190, top=top),
        word("3", 320, 325, top=top),
        word("×", 327.5, 333, top=top),
        word("10", 335.5, 345.5, top=top),
        word("−", 345.5, 350, 7, top=top, rise=3),
        word("3", 350, 353.5, 7, top=top, rise=3),
    ]
    for i in range(6):  # prose below the table
        top = 200 + 12 * i
        x = 72.0
        for t in f"After the table {BODY} line".split():
            words.append(word(t, x, x + 5.0 * len(t), top=top))
            x += 5.0 * len(t) + 2.5
    doc = layout([PageData(1, 612, 792, words, [(140, 114, 360, 115), (140, 129, 360, 130), (140, 172, 360, 173)])])
    table = next(b.text for b in doc.blocks if b.kind == "table")
    assert "Meta step | 3 × 10−3" in table, table


class _Page:
    """What extract_page asks of a pdfplumber page."""

    def __init__(self, words: list[dict]):
        self.words, self.width, self.height, self.lines, self.rects = words, 612, 792, [], []

    def extract_words(self, **_):
        return self.words


def _pw(text: str, x0: float, fontname: str, size: float = 10.0) -> dict:
    return {"text": text, "x0": x0, "x1": x0 + 5, "top": 100, "bottom": 110, "size": size, "fontname": fontname}


def test_tex_maths_glyph_codes_become_characters():
    """pdfminer gives '(cid:N)' for glyphs of TeX's maths fonts it cannot name; N is the
    slot in the font's TeX encoding, so CMMI's 15 is ϵ and CMSY's 0 the minus."""
    page = _Page(
        [
            _pw("where", 50, "Times-Roman"),
            _pw("(cid:15)", 80, "ABCDEF+CMMI10"),
            _pw("=", 88, "Times-Roman"),
            _pw("10", 95, "Times-Roman"),
            _pw("(cid:0)", 105, "GHIJKL+CMSY7", 7),
            _pw("9", 110, "Times-Roman", 7),
            _pw("(cid:48)", 120, "CMSY8", 7),  # prime
            _pw("(cid:80)", 130, "XYZABC+CMEX10"),  # a display sum: dropped as before
            _pw("(cid:15)", 140, "SomeOtherFont"),  # unknown encoding: dropped, never guessed
            _pw("(cid:51)", 150, "ZapfDingbats"),  # ✓
        ]
    )
    texts = [w["text"] for w in extract_page(page, 1).words]
    assert texts == ["where", "ϵ", "=", "10", "−", "9", "′", "✓"], texts


# ---------------------------------------------------------------------------
# Items 5 and 6 on a written paper
# ---------------------------------------------------------------------------

H = 792


def small_caps(page: Page, x: float, top: float, text: str, size: float) -> None:
    """Small capitals as Times' faked small caps set them (ICLR's headings, SciTab's name):
    each word's first capital at the full size, the rest as capitals at 0.8 of it, and
    0.05 em between all glyphs."""
    runs = []
    for i, part in enumerate(text.split(" ")):
        head, rest = part[0], part[1:]
        if not head.isalpha():  # a section number
            runs.append((("" if i == 0 else " ") + part, size, 0, "F1", 0.05 * size))
            continue
        runs.append((("" if i == 0 else " ") + head, size, 0, "F1", 0.05 * size))
        if rest:
            runs.append((rest, 0.8 * size, 0, "F1", 0.05 * size))
    page.text_at(x, H - top - size, runs, size)


def paper(tmp_path: Path) -> Path:
    p = Page()
    p.text(130, 60, "Seeing Through Small Capitals", size=16, bold=True)
    p.text(200, 85, "Ada Lovelace and Alan Turing", size=10)
    small_caps(p, 72, 120, "ABSTRACT", 12)
    p.text(72, 142, f"We study how {BODY} number whole for every later question.")
    small_caps(p, 72, 170, "1 INTRODUCTION", 12)
    # Adam's epsilon as the Transformer paper sets it: the epsilon from CMMI (glyph
    # code 15), the exponent's minus from CMSY (code 0), both without a name
    p.text_at(
        72,
        H - 200,
        [
            ("We use Adam with ", 10, 0),
            ("\x0f", 10, 0, "F3"),
            (" = 10", 10, 0),
            ("\x00", 7, 4, "F4"),
            ("9", 7, 4),
            (" and a score of 28", 10, 0),
            (".", 10.5, 0),
            ("4 BLEU.", 10, 0),
        ],
        10,
    )
    p.text(72, 214, f"The results show that {BODY} score in one place.")
    small_caps(p, 72, 250, "2 PRE-TRAINING", 12)
    p.text(72, 272, f"Pre-training {BODY} weight for the fine-tuning runs.")
    small_caps(p, 72, 300, "2.1 ATTENTION DISTANCE", 12)
    p.text(72, 322, f"The attention distance {BODY} head of each layer apart.")
    # a figure: labels in small capitals and in capitals, tick labels, caption below
    small_caps(p, 240, 360, "PATCH EMBEDDING", 9)
    p.text(250, 380, "ENCODER", size=9)
    for i, tick in enumerate(["0.2", "0.4", "0.6"]):
        p.text(200 + 60 * i, 420, tick, size=7)
    p.text(72, 440, "Figure 1: The encoder and its attention distance per layer.")
    p.text(72, 470, f"After the figure {BODY} text of the section going.")
    return write_pdf(tmp_path / "caps.pdf", [p], {"Title": "Seeing Through Small Capitals"}, tex_fonts=True)


def test_letter_spaced_small_caps_headings_make_the_section_tree(tmp_path):
    doc = parse_file(paper(tmp_path))
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings == [
        (1, "ABSTRACT"),
        (1, "1 INTRODUCTION"),
        (1, "2 PRE-TRAINING"),
        (2, "2.1 ATTENTION DISTANCE"),
    ], headings
    text = "\n".join(b.text for b in doc.blocks)
    for broken in ("A TTENTION", "P RE", "I NTRODUCTION", "P ATCH"):
        assert broken not in text, text
    chunks = chunk_document(doc, "Seeing Through Small Capitals")
    paths = {c.section_path for c in chunks if c.kind != "section" and "attention distance" in c.content}
    assert paths == {"2 PRE-TRAINING > 2.1 ATTENTION DISTANCE"}, paths


def test_a_label_in_small_capitals_is_no_section(tmp_path):
    """A diagram without a caption leaves its labels in the text flow; one set in small
    capitals at body size (two sizes, all capitals, like a heading) is no section: small
    capitals make a heading only with a section number or a heading's name."""
    p = Page()
    p.text(130, 60, "Seeing Through Small Capitals", size=16, bold=True)
    small_caps(p, 72, 120, "1 INTRODUCTION", 12)
    p.text(72, 142, f"We study how {BODY} label apart from the headings.")
    small_caps(p, 250, 170, "TRANSFORMER ENCODER", 10)
    p.text(72, 200, f"After the diagram {BODY} text of the section going.")
    small_caps(p, 72, 230, "ACKNOWLEDGMENTS", 12)
    p.text(72, 252, f"We thank {BODY} reader of the draft.")
    doc = parse_file(write_pdf(tmp_path / "label.pdf", [p]))
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(1, "1 INTRODUCTION"), (1, "ACKNOWLEDGMENTS")], headings
    assert "TRANSFORMER ENCODER" in "\n".join(b.text for b in doc.blocks if b.kind == "prose")


def test_numbers_and_maths_symbols_stay_in_the_text(tmp_path):
    doc = parse_file(paper(tmp_path))
    text = "\n".join(b.text for b in doc.blocks)
    assert "We use Adam with ϵ = 10−9 and a score of 28.4 BLEU." in text, text


def test_the_pdfplumber_engine_reads_maths_glyphs_as_the_layout_engine_does(tmp_path):
    """The generic engine reads each glyph through the layout engine's one function
    (word_text): ϵ and the minus come back, no '(cid:N)' code is left in the text."""
    from scirag.ingest.pdf.engines import pdf_engines

    doc = pdf_engines()["pdfplumber"](paper(tmp_path))
    assert doc.parser == "pdfplumber"
    text = "\n".join(b.text for b in doc.blocks)
    assert "We use Adam with ϵ = 10−9 and a score of 28.4 BLEU." in text, text
    assert "(cid:" not in text, text


def test_a_word_of_several_fonts_reads_each_code_in_its_own_font():
    """The pdfplumber engine's words are cut whatever their fonts: each code is read in
    the font of its glyph, and the word's text (ligatures expanded) is kept otherwise."""
    from scirag.ingest.pdf.layout import word_text_of_chars

    def ch(text, font="Times-Roman"):
        return {"text": text, "fontname": font}

    chars = [ch("ﬁ"), ch("n"), ch("e"), ch("(cid:0)", "ABCDEF+CMSY7"), ch("9"), ch("(cid:15)", "CMMI10")]
    assert word_text_of_chars("fine(cid:0)9(cid:15)", chars) == "fine−9ϵ"
    chars = [ch("(cid:15)", "SomeOtherFont"), ch("x"), ch("(cid:15)", "CMMI10")]
    assert word_text_of_chars("(cid:15)x(cid:15)", chars) == "xϵ"  # an unknown font's code is dropped
    assert word_text_of_chars("(cid:51)", [ch("(cid:51)", "Foo")]) == ""


# ---------------------------------------------------------------------------
# Item 7: the title stops before the author block
# ---------------------------------------------------------------------------


def test_a_title_stops_where_the_author_block_starts(tmp_path):
    """The authors and their institute set large (at least 1.25x the body, as a subtitle
    may be), without commas, marks, e-mails or a date: only their distance from the
    title tells them apart. A subtitle set as close as the title's own lines stays."""
    from scirag.ingest.pdf.meta import read_pdf_meta

    def page(lines):
        p = Page()
        for text, size, top in lines:
            p.text(90, top, text, size=size)
        p.text(280, 250, "Abstract", size=11)
        for i in range(14):
            p.text(72, 270 + 12 * i, f"Body line {i} says that {BODY} straw yield in range.", size=10)
        return p

    title = [("Flashing Straw: Fast and Memory-Efficient", 20, 60), ("Exact Baling with IO-Awareness", 20, 84)]
    authors = [("Ada Lovelace Grace Hopper Alan Turing", 14, 125), ("Analytical Engine Institute", 14, 144)]
    pdf = write_pdf(tmp_path / "t.pdf", [page(title + authors)])
    meta = read_pdf_meta(pdf)
    assert meta.title == "Flashing Straw: Fast and Memory-Efficient Exact Baling with IO-Awareness", meta.title
    assert meta.authors == ["Ada Lovelace", "Grace Hopper", "Alan Turing"], meta.authors

    subtitle = [("Straw Bales", 20, 60), ("Bootstrapping Baling With Baling", 16, 84)]
    pdf = write_pdf(tmp_path / "s.pdf", [page(subtitle + [(a, 10, t) for a, _, t in authors])])
    assert read_pdf_meta(pdf).title == "Straw Bales Bootstrapping Baling With Baling"
