"""Test PDFs, written by the tests themselves: one minimal PDF writer and the papers
built with it. Run as a script to write the papers into a folder to look at them:

    .venv/bin/python tests/data/make_pdfs.py /tmp/pdfs

The writer uses the standard Helvetica fonts (pdfminer knows their metrics, so
character boxes and gaps are real): no font files, no PDF library, no licence
question. Object order is fixed: catalog, page tree, fonts, then each page
followed by its content stream, then the /Info dictionary; tests that cut a file
(truncation) rely on it. write_pdf(..., tex_fonts=True) adds, after those, the two
TeX maths fonts papers set symbols in (CMMI10 as F3, CMSY10 as F4), named but not
embedded, so a reader gets their glyph codes, not characters, as from a TeX paper.
"""

from __future__ import annotations

import sys
from pathlib import Path

W, H = 612, 792


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


class Page:
    """Drawing operations of one US-letter page."""

    def __init__(self):
        self.ops: list[str] = []

    def text(self, x: float, top: float, s: str, size: float = 10, bold: bool = False) -> "Page":
        """Text whose box starts `top` points below the page's top edge."""
        font = "F2" if bold else "F1"
        y = H - top - size  # top of the text box -> baseline, roughly
        self.ops.append(f"BT /{font} {size} Tf {x:.1f} {y:.1f} Td ({_esc(s)}) Tj ET")
        return self

    def text_at(
        self, x: float, y: float, text: str | list[tuple[str, float, float]], size: float = 10, rotated: bool = False
    ) -> "Page":
        """Text with its baseline at y points above the bottom edge; `text` may be a list of
        (text, size, rise[, font[, letter spacing]]) runs (superscript marks inside a line,
        maths fonts, letter-spaced small capitals); rotated: 90 degrees."""
        matrix = f"0 1 -1 0 {x} {y} Tm" if rotated else f"1 0 0 1 {x} {y} Tm"
        runs = text if isinstance(text, list) else [(text, size, 0)]
        # a run may name its font (F1-F4) and a letter spacing in points: Tc between its
        # glyphs and a TJ shift after its last one (Tc lasts to the end of the text
        # object, so it is set for every run once one has it)
        spaced = any(len(run) > 4 for run in runs)
        ops = []
        for run in runs:
            font, sp = run[3] if len(run) > 3 else "F1", run[4] if len(run) > 4 else 0
            show = f"[({_esc(run[0])}) {-1000 * sp / run[1]:.1f}] TJ" if sp else f"({_esc(run[0])}) Tj"
            ops.append(f"/{font} {run[1]} Tf " + (f"{sp} Tc " if spaced else "") + f"{run[2]} Ts {show}")
        body = " ".join(ops)
        self.ops.append(f"BT {matrix} {body} ET")
        return self

    def rule(self, x0: float, x1: float, top: float) -> "Page":
        """A horizontal line (table rules)."""
        self.ops.append(f"0.5 w {x0:.1f} {H - top:.1f} m {x1:.1f} {H - top:.1f} l S")
        return self


def write_pdf(path: Path, pages: list[Page], info: dict | None = None, tex_fonts: bool = False) -> Path:
    objs: list[bytes] = []
    n_pages = len(pages)
    # the TeX fonts come last (after /Info), so files without them keep their layout
    tex = 5 + 2 * n_pages + (1 if info else 0)
    extra = f" /F3 {tex} 0 R /F4 {tex + 1} 0 R" if tex_fonts else ""
    # 1 catalog, 2 pages, 3 F1, 4 F2, then (page, content) pairs, then /Info
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(n_pages))
    objs.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objs.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    for i, page in enumerate(pages):
        stream = "\n".join(page.ops).encode("latin-1")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {W} {H}] /Contents {6 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 3 0 R /F2 4 0 R{extra} >> >> >>".encode()
        )
        objs.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    if info:
        objs.append(("<< " + " ".join(f"/{k} ({_esc(v)})" for k, v in info.items()) + " >>").encode("latin-1"))
    if tex_fonts:
        widths = " ".join(["500"] * 128)
        for name in ("CMMI10", "CMSY10"):
            objs.append(
                f"<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+{name} /FirstChar 0 /LastChar 127 "
                f"/Widths [{widths}] /FontDescriptor << /Type /FontDescriptor /FontName /ABCDEF+{name} "
                f"/Flags 4 /FontBBox [0 -250 1000 750] /ItalicAngle 0 /Ascent 750 /Descent -250 "
                f"/CapHeight 700 /StemV 80 >> >>".encode()
            )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    info_ref = 5 + 2 * n_pages
    trailer = f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R" + (f" /Info {info_ref} 0 R" if info else "")
    out += f"{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


# ---------------------------------------------------------------------------
# A two-column paper (stands in for a real conference paper: tests/py/test_parse.py)
# ---------------------------------------------------------------------------

LEFT, RIGHT, COL_W = 60, 320, 230
# The three tables: caption, header, rows. Every number appears in its table only.
TABLES = [
    (
        "Table 1: Claims per dataset in the four benchmarks.",
        ("Dataset", "Claims", "Tables"),
        [
            ("SciFactoid", "1,225", "312"),
            ("TabFever", "117,854", "2,118"),
            ("ClaimBank", "8,407", "955"),
            ("StrawQA", "3,061", "486"),
        ],
    ),
    (
        "Table 2: Accuracy of the four systems on the test split.",
        ("System", "Acc", "F1"),
        [
            ("Baseline", "61.42", "55.18"),
            ("Retriever", "68.93", "63.27"),
            ("Reader", "72.06", "66.81"),
            ("Ours", "79.54", "74.39"),
        ],
    ),
    (
        "Table 3: Latency in milliseconds per query.",
        ("Stage", "p50", "p95"),
        [
            ("Embed", "12.7", "19.3"),
            ("Search", "31.6", "48.2"),
            ("Rerank", "88.4", "131.9"),
            ("Answer", "402.5", "687.1"),
        ],
    ),
]
# Left-column lines of the abstract: the test checks they are read in this order,
# not interleaved with the right column's lines at the same height.
ABSTRACT_LEFT = [
    "Current scientific fact-checking benchmarks",
    "exhibit several shortcomings that limit how",
    "well they measure compositional reasoning",
    "over the numbers reported in result tables.",
]
ABSTRACT_RIGHT = [
    "Right column words stand beside the abstract",
    "and would interleave with it if a reader took",
    "each line across the whole page width at",
    "once instead of column after column here.",
]
FILL = [
    "The method reads every page of the paper in",
    "order and keeps each result table whole so",
    "that later questions find the rows and their",
    "labels together with the caption above it.",
]
PAGES = 4


def _column(page: Page, x: float, top: float, lines: list[str]) -> float:
    for line in lines:
        page.text(x, top, line, size=9)
        top += 11
    return top + 8


def _table(page: Page, x: float, top: float, table) -> float:
    caption, header, rows = table
    page.text(x, top, caption, size=8)
    top += 14
    page.rule(x, x + COL_W, top)
    for j, cell in enumerate(header):
        page.text(x + 4 + 80 * j, top + 3, cell, size=8, bold=True)
    page.rule(x, x + COL_W, top + 15)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            page.text(x + 4 + 80 * j, top + 19 + 11 * i, cell, size=8)
    bottom = top + 19 + 11 * len(rows)
    page.rule(x, x + COL_W, bottom + 2)
    return bottom + 18


def two_column_paper(path: Path) -> Path:
    """Four pages: a title, a two-column abstract, numbered sections and subsections,
    three ruled tables with captions above them, a references section on the last page,
    and a running head and page number on every page."""
    pages = [Page() for _ in range(PAGES)]
    for n, p in enumerate(pages, 1):
        p.text(230, 28, "Workshop on Toy Tables 2026", size=7)  # running head
        p.text(300, 760, str(n), size=8)  # page number
    p1 = pages[0]
    p1.text(130, 60, "Compositional Claims over Result Tables", size=16, bold=True)
    p1.text(230, 84, "Ada Lovelace and Alan Turing", size=10)
    p1.text(LEFT, 115, "Abstract", size=11, bold=True)
    _column(p1, LEFT, 132, ABSTRACT_LEFT)
    _column(p1, RIGHT, 132, ABSTRACT_RIGHT)
    headings = iter(
        [
            ("1 Introduction", None),
            ("2 Data", "2.1 Sources"),
            ("3 Method", "3.1 Retrieval"),
            ("4 Results", "4.1 Latency"),
            ("5 Discussion", None),
            ("6 Conclusion", None),
        ]
    )
    tables = iter(TABLES)
    for n, page in enumerate(pages):
        tops = {LEFT: 200 if n == 0 else 60, RIGHT: 200 if n == 0 else 60}
        for x in (LEFT, RIGHT):
            if n == PAGES - 1 and x == RIGHT:
                page.text(x, tops[x], "References", size=11, bold=True)
                _column(
                    page,
                    x,
                    tops[x] + 18,
                    [
                        "[1] A. Author. Tables in papers. In Proc. of",
                        "a Venue, 2020.",
                        "[2] B. Author. Claims and numbers. Journal",
                        "of Things, 2021.",
                    ],
                )
                continue
            heading = next(headings, None)
            top = tops[x]
            if heading:
                page.text(x, top, heading[0], size=11, bold=True)
                top = _column(page, x, top + 18, FILL)
                if heading[1]:
                    page.text(x, top, heading[1], size=10, bold=True)
                    top = _column(page, x, top + 16, FILL)
            table = next(tables, None) if x == RIGHT or n > 0 else None
            if table:
                top = _table(page, x, top + 6, table)
            _column(page, x, top, FILL + FILL)
    return write_pdf(path, pages)


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    print(two_column_paper(out / "two-column-paper.pdf"))
