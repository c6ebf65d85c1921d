"""Tests for scirag.ingest.parse: one block model for Markdown, HTML, text and PDF."""

import io
import re
from pathlib import Path

import pytest

from make_pdfs import ABSTRACT_LEFT, ABSTRACT_RIGHT, PAGES, TABLES, two_column_paper
from scirag.ingest.parse import Block, ParseError, ParsedDocument, parse_file, parse_text

NUMBER = re.compile(r"^\d[\d,]*(\.\d+)?%?$")


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------

MARKDOWN = """\
# Crop Residue Assessment

Harvested acres are five-year means
of county survey data.

## 2 Methods

### 2.1 Feedstock handling

| County | Crop | Acres |
|:---|---|---:|
| Harlan | Barley | 118,400 |
| Osgood | Corn (grain) | 188,300 |

```
removable = acres  x  yield  x  ratio
```

Results use **bold** and a [link](http://example.org).
"""


def test_markdown_headings_keep_levels_and_first_h1_is_title():
    doc = parse_text(MARKDOWN, "markdown")
    assert doc.parser == "markdown"
    assert doc.title == "Crop Residue Assessment"
    headings = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert headings == [("Crop Residue Assessment", 1), ("2 Methods", 2), ("2.1 Feedstock handling", 3)]


def test_markdown_pipe_table_is_one_block_without_separator_line():
    doc = parse_text(MARKDOWN, "markdown")
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 1
    assert tables[0].text.split("\n") == [
        "County | Crop | Acres",
        "Harlan | Barley | 118,400",
        "Osgood | Corn (grain) | 188,300",
    ]
    assert (tables[0].line_start, tables[0].line_end) == (10, 13)


def test_markdown_paragraphs_code_and_line_spans():
    doc = parse_text(MARKDOWN, "markdown")
    prose = [b for b in doc.blocks if b.kind == "prose"]
    assert prose[0].text == "Harvested acres are five-year means\nof county survey data."
    assert (prose[0].line_start, prose[0].line_end) == (3, 4)
    assert prose[1].text == "removable = acres  x  yield  x  ratio"  # fenced code kept verbatim
    assert prose[2].text == "Results use bold and a link."  # inline markup stripped


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------

HTML = """\
<html><head><title>Straw &amp; Stover</title>
<style>p { color: red; }</style>
<script>var s = "<p>not content</p>";</script></head>
<body>
<h1>Straw Report</h1>
<p>Harvested acres were <b>141,000</b> in 2021,
at a 1.1 straw-to-grain ratio.</p>
<h3>Yields</h3>
<table>
<tr><th>Crop</th><th>Acres</th></tr>
<tr><td>Wheat</td><td>64,200</td></tr>
</table>
<ul><li>Corn stover is the largest stream.</li></ul>
<div>Text in a div also counts as prose.</div>
</body></html>
"""


def test_html_title_headings_table_and_prose():
    doc = parse_text(HTML, "html")
    assert doc.parser == "html"
    assert doc.title == "Straw & Stover"
    kinds = [(b.kind, b.level) for b in doc.blocks]
    assert kinds == [("heading", 1), ("prose", None), ("heading", 3), ("table", None), ("prose", None), ("prose", None)]
    assert doc.blocks[3].text == "Crop | Acres\nWheat | 64,200"
    assert doc.blocks[1].text == "Harvested acres were 141,000 in 2021,\nat a 1.1 straw-to-grain ratio."
    assert (doc.blocks[1].line_start, doc.blocks[1].line_end) == (6, 7)


def test_html_skips_script_and_style():
    text = "\n".join(b.text for b in parse_text(HTML, "html").blocks)
    assert "not content" not in text and "color" not in text


# ---------------------------------------------------------------------------
# Plain text and dispatch
# ---------------------------------------------------------------------------


def test_plain_text_paragraphs_are_prose_with_line_spans():
    doc = parse_text("RESULTS\n\nFirst paragraph\ncontinues here.\n\n\nSecond one.\n", "text")
    assert doc.parser == "text"
    assert [(b.kind, b.text, b.line_start, b.line_end) for b in doc.blocks] == [
        ("prose", "RESULTS", 1, 1),
        ("prose", "First paragraph\ncontinues here.", 3, 4),
        ("prose", "Second one.", 7, 7),
    ]


def test_parse_text_rejects_unknown_format():
    with pytest.raises(ParseError, match="notes.rst"):
        parse_text("x", "rst", name="notes.rst")


def test_parse_file_dispatches_on_suffix(tmp_path):
    (tmp_path / "a.md").write_text("# Title\n\nBody text of the document.\n")
    (tmp_path / "b.htm").write_text("<h2>Head</h2><p>Body text.</p>")
    (tmp_path / "c.txt").write_text("Plain body text.\n")
    (tmp_path / "d.csv").write_text("crop,acres\nwheat,64200\n")
    assert parse_file(tmp_path / "a.md").parser == "markdown"
    assert parse_file(tmp_path / "b.htm").parser == "html"
    assert parse_file(str(tmp_path / "c.txt")).parser == "text"
    unknown = parse_file(tmp_path / "d.csv")  # other suffixes: text if it is UTF-8
    assert unknown.parser == "text" and unknown.blocks[0].text.startswith("crop,acres")


def test_parse_file_errors_name_the_file(tmp_path):
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ParseError, match=r"image\.png.*\.png"):
        parse_file(binary)
    latin = tmp_path / "old.txt"
    latin.write_bytes("caf\xe9 au lait".encode("latin-1"))
    with pytest.raises(ParseError, match=r"old\.txt.*UTF-8"):
        parse_file(latin)
    with pytest.raises(ParseError, match=r"missing\.md.*not found"):
        parse_file(tmp_path / "missing.md")


# ---------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["layout", "pdfplumber"])
def paper(request, tmp_path_factory) -> ParsedDocument:
    # The two engines that cut tables out of the prose, on a generated two-column paper
    # (tests/data/make_pdfs.py); the engines' finer behaviour is pinned in test_pdf_layout.py.
    pdf = two_column_paper(tmp_path_factory.mktemp("paper") / "two-column-paper.pdf")
    return parse_file(pdf, pdf_engine=request.param)


def test_pdf_yields_blocks_on_every_page_with_line_numbers(paper):
    assert paper.pages == PAGES and paper.partial is None
    assert all(b.page is not None and 1 <= b.page <= PAGES for b in paper.blocks)
    assert {b.page for b in paper.blocks} == set(range(1, PAGES + 1))  # every page has text
    # Line numbers run through the whole extracted text, in order.
    starts = [b.line_start for b in paper.blocks]
    assert starts == sorted(starts) and starts[0] == 1
    assert all(b.line_end >= b.line_start for b in paper.blocks)


def test_pdf_tables_are_whole_with_their_numeric_cells(paper):
    tables = [(i, b) for i, b in enumerate(paper.blocks) if b.kind == "table"]
    assert len(tables) == len(TABLES)
    for (i, block), (caption, header, rows) in zip(tables, TABLES):
        # layout keeps the caption in the table block; pdfplumber leaves it in the block before
        assert caption in {"layout": block, "pdfplumber": paper.blocks[i - 1]}[paper.parser].text
        assert " | ".join(header) in block.text
        for row in rows:
            assert " | ".join(row) in block.text  # every row, cells in order
        numeric = [c for c in re.split(r" \| |\n", block.text) if NUMBER.match(c.strip())]
        assert len(numeric) == 2 * len(rows)


def test_pdf_table_numbers_are_not_duplicated_in_prose(paper):
    prose = "\n".join(b.text for b in paper.blocks if b.kind == "prose")
    for _, _, rows in TABLES:
        for row in rows:
            assert not [cell for cell in row[1:] if cell in prose]
    table = next(t for t in paper.blocks if t.kind == "table" and "117,854" in t.text)
    assert "1,225" in table.text and table.page == 1


def test_pdf_two_column_text_is_read_column_by_column(paper):
    text = "\n".join(b.text for b in paper.blocks if b.kind == "prose")
    # the layout engine joins a paragraph's lines; pdfplumber keeps them
    joiner = {"layout": " ", "pdfplumber": "\n"}[paper.parser]
    left, right = joiner.join(ABSTRACT_LEFT), joiner.join(ABSTRACT_RIGHT)
    assert left in text and right in text  # never interleaved line by line
    assert text.index(left) < text.index(right)


def test_corrupt_pdf_raises_parse_error_naming_file(tmp_path):
    bad = tmp_path / "broken-report.pdf"
    bad.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage \x00\xff no trailer")
    with pytest.raises(ParseError, match=r"broken-report\.pdf.*(corrupt|unreadable)"):
        parse_file(bad)


def test_not_a_pdf_and_empty_pdf_raise_parse_error(tmp_path):
    fake = tmp_path / "fake.pdf"
    fake.write_bytes(b"<html>this is not a pdf</html>")
    with pytest.raises(ParseError, match=r"fake\.pdf.*not a PDF"):
        parse_file(fake)
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(ParseError, match=r"empty\.pdf.*empty"):
        parse_file(empty)


def _pdf_bytes(encrypt: bool) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    if encrypt:
        writer.encrypt(user_password="secret", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_encrypted_pdf_raises_parse_error(tmp_path):
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(_pdf_bytes(encrypt=True))
    with pytest.raises(ParseError, match=r"locked\.pdf.*encrypted"):
        parse_file(locked)


def test_pdf_without_text_raises_parse_error(tmp_path):
    scanned = tmp_path / "scanned.pdf"
    scanned.write_bytes(_pdf_bytes(encrypt=False))
    with pytest.raises(ParseError, match=r"scanned\.pdf.*no extractable text"):
        parse_file(scanned)


def test_block_defaults():
    block = Block("prose", "text")
    assert (block.level, block.page, block.line_start, block.line_end) == (None, None, None, None)
