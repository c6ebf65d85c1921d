"""PDF engines behind one interface (Path -> ParsedDocument), the engine choice and the
fallback: 'layout' (layout.py, the default), the generic 'pdfplumber' path, the text-only
'pypdf' path (also the fallback when the chosen engine fails) and 'docling' where it is
installed. parse.parse_file sends every .pdf here (parse_pdf).
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import Counter
from pathlib import Path

from ..blocks import CELL_SEP, DocLines, ParsedDocument, ParseError, clean_pdf_title
from .layout import word_text_of_chars

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------
# PDF: the chosen engine (default 'layout'), then pypdf (text only) as the fallback
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# PDF engines: one interface, so engines can be compared on the same ground truth
# ---------------------------------------------------------------------------
#
# An engine is a function Path -> ParsedDocument.  'layout' (pdfplumber read as
# a paper: captions anchor tables, fonts mark headings) is the default; the
# generic 'pdfplumber' path and the text-only 'pypdf' path stay selectable, and
# 'docling' runs where it is installed with its models.  All of these are
# permissively licensed; an AGPL engine must never become the default.
# SCIRAG_PDF_ENGINE picks the engine for a process (e.g. for `scirag eval pdf`).

PDF_ENGINE_ENV = "SCIRAG_PDF_ENGINE"
DEFAULT_PDF_ENGINE = "layout"


def _engine_layout(path: Path) -> "ParsedDocument":
    from .layout import parse_pdf_layout

    return parse_pdf_layout(path)


def pdf_engines() -> dict:
    """name -> parse function, for every engine this installation can run."""
    engines = {"layout": _engine_layout, "pdfplumber": _parse_pdf_pdfplumber, "pypdf": _parse_pdf_pypdf}
    if _docling_available():
        engines["docling"] = _parse_pdf_docling
    return engines


def pdf_engine_name(name: str | None = None) -> str:
    import os

    name = (name or os.environ.get(PDF_ENGINE_ENV) or DEFAULT_PDF_ENGINE).strip().lower()
    known = pdf_engines()
    if name not in known:
        raise ParseError(
            f"unknown PDF engine {name!r} (from {PDF_ENGINE_ENV} or the option); available: {', '.join(sorted(known))}"
        )
    return name


def parse_pdf(path: Path, engine: str | None = None) -> ParsedDocument:
    try:
        with path.open("rb") as fh:
            head = fh.read(1024)
    except OSError as exc:
        raise ParseError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    if not head:
        raise ParseError(f"{path}: empty file (0 bytes), not a PDF")
    if b"%PDF-" not in head:
        raise ParseError(f"{path}: not a PDF (no %PDF- header in the first 1024 bytes)")

    name = pdf_engine_name(engine)
    errors: list[str] = []
    if name != "pypdf":
        try:
            doc = pdf_engines()[name](path)
            if doc.blocks:
                return doc
            errors.append(f"{name} found no text")
        except Exception as exc:  # the text-only engine below may still read it
            log.warning("PDF engine %s failed on %s (%s); falling back to pypdf", name, path, exc)
            errors.append(f"{name}: {_describe(exc)}")

    try:
        doc = _parse_pdf_pypdf(path)
    except ParseError:
        raise
    except Exception as exc:
        errors.append(f"pypdf: {_describe(exc)}")
        raise ParseError(f"{path}: unreadable or corrupt PDF ({'; '.join(errors)})") from None
    if doc.blocks and errors and name != "pypdf":
        # Text only, without tables or headings: say so rather than pass it off as a full parse.
        doc.partial = "; ".join(errors + ([doc.partial] if doc.partial else []) + ["read as plain text by pypdf"])
    if not doc.blocks:
        raise ParseError(f"{path}: PDF has no extractable text ({doc.pages} pages; scanned images need OCR)")
    return doc


def _describe(exc: Exception) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}"[:300]


def _docling_available() -> bool:
    try:
        import docling  # noqa: F401
    except Exception:
        return False
    return True


def _parse_pdf_docling(path: Path) -> ParsedDocument:
    from docling.document_converter import DocumentConverter

    result = DocumentConverter().convert(str(path))
    ddoc = result.document
    out = DocLines()
    title = None
    for item, _depth in ddoc.iterate_items():
        label = str(getattr(item, "label", "")).lower().split(".")[-1]
        prov = getattr(item, "prov", None) or []
        page = getattr(prov[0], "page_no", None) if prov else None
        if label in ("page_header", "page_footer", "picture"):
            continue
        if label == "table":
            rows = _docling_table_rows(item)
            if rows:
                out.add("table", "\n".join(CELL_SEP.join(r) for r in rows), page)
            continue
        text = (getattr(item, "text", "") or "").strip()
        if not text:
            continue
        if label == "title":
            title = title or text
            out.add("heading", text, page, level=1)
        elif label == "section_header":
            out.add("heading", text, page, level=min(6, max(1, int(getattr(item, "level", 1) or 1))))
        else:
            out.add("prose", text, page)
    try:
        pages = ddoc.num_pages()
    except Exception:
        pages = None
    return ParsedDocument(blocks=out.blocks, parser="docling", title=title, pages=pages)


def _docling_table_rows(item) -> list[list[str]]:
    grid = getattr(getattr(item, "data", None), "grid", None) or []
    rows = []
    for row in grid:
        cells = [re.sub(r"\s+", " ", (getattr(c, "text", "") or "")).strip() for c in row]
        if any(cells):
            rows.append(cells)
    return rows


def _parse_pdf_pypdf(path: Path) -> ParsedDocument:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # the ParseError says what matters
    reader = PdfReader(str(path))
    if reader.is_encrypted:
        try:
            unlocked = reader.decrypt("")
        except Exception as exc:
            raise ParseError(f"{path}: encrypted PDF that cannot be opened ({_describe(exc)})") from None
        if not unlocked:
            raise ParseError(f"{path}: encrypted PDF (a password is required)")
    out = DocLines()
    failed: list[str] = []
    pages = reader.pages
    for number, page in enumerate(pages, start=1):
        try:
            text = (page.extract_text() or "").replace("\r\n", "\n").replace("\r", "\n")
        except Exception as exc:  # keep the pages that can be read
            failed.append(f"page {number}: {exc.__class__.__name__}")
            continue
        for para in re.split(r"\n\s*\n", text):
            out.add("prose", para, number)
    try:
        title = clean_pdf_title((reader.metadata or {}).get("/Title"))
    except Exception:  # a damaged info dictionary costs only the title
        title = None
    partial = f"{len(failed)} of {len(pages)} pages unreadable ({'; '.join(failed[:5])})" if failed else None
    return ParsedDocument(blocks=out.blocks, parser="pypdf", title=title, pages=len(pages), partial=partial)


# ---------------------------------------------------------------------------
# pdfplumber: tables from rulings, prose in reading order (two-column aware)
# ---------------------------------------------------------------------------

_X_TOL = 1.5  # pdfplumber's default (3) glues words of tightly set LaTeX text together
_ROW_TOL = 3.0  # words whose tops differ by less than this share a text row


def _parse_pdf_pdfplumber(path: Path) -> ParsedDocument:
    import pdfplumber

    # pdfminer logs a warning per odd object; they say nothing actionable here.
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    out = DocLines()
    with pdfplumber.open(str(path)) as pdf:
        for number, page in enumerate(pdf.pages, start=1):
            for kind, text in _pdfplumber_page_blocks(page):
                out.add(kind, text, number)
            page.flush_cache()  # keeps memory flat on long documents
        title = clean_pdf_title((pdf.metadata or {}).get("Title"))
        pages = len(pdf.pages)
    return ParsedDocument(blocks=out.blocks, parser="pdfplumber", title=title, pages=pages)


def _pdfplumber_page_blocks(page) -> list[tuple[str, str]]:
    """('table' | 'prose', text) pairs for one page, in reading order."""
    words = []
    # each glyph read as the layout engine reads it (TeX's maths glyphs mapped by their
    # font, other codes dropped); the words are cut as before, whatever their fonts
    for w in page.extract_words(x_tolerance=_X_TOL, y_tolerance=_ROW_TOL, return_chars=True):
        chars = w.pop("chars")
        text = word_text_of_chars(w["text"], chars) if w.get("upright", True) else ""
        if text:
            words.append({**w, "text": text})
    tables = _find_tables(page, words)
    if tables:
        # Drop the words inside tables from the prose so numbers appear once.
        words = [w for w in words if not any(_center_inside(w, bbox) for bbox, _ in tables)]
    rows = _group_rows(words)
    streams = _reading_streams(rows, tables, page.width)
    blocks: list[tuple[str, str]] = []
    for stream in streams:
        for item in _stream_paragraphs(stream):
            blocks.append(item)
    return blocks


def _center_inside(obj: dict, bbox: tuple) -> bool:
    cx = (obj["x0"] + obj["x1"]) / 2
    cy = (obj["top"] + obj["bottom"]) / 2
    x0, top, x1, bottom = bbox
    return x0 <= cx <= x1 and top <= cy <= bottom


def _overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# -- tables -------------------------------------------------------------------


def _find_tables(page, words: list[dict]) -> list[tuple[tuple, list[list[str]]]]:
    """Tables as (bbox, rows).

    Two kinds of ruling are common: full grids (both directions), which
    pdfplumber's line strategy handles well, and booktabs-style tables with
    only horizontal rules (most scientific papers), which it misses; for
    those we cut columns at the vertical gutters of the words between rules.
    """
    found: list[tuple[tuple, list[list[str]]]] = []
    if not page.edges:
        return found
    if any(e["orientation"] == "v" for e in page.edges):
        for table in page.find_tables():
            rows = _clean_rows(table.extract(x_tolerance=_X_TOL))
            if _looks_like_table(rows) and not any(_overlaps(table.bbox, b) for b, _ in found):
                found.append((tuple(table.bbox), rows))
    for bbox in _ruled_regions(page, words):
        if any(_overlaps(bbox, b) for b, _ in found):
            continue
        inside = [w for w in words if _center_inside(w, bbox)]
        rows = _clean_rows(_grid_from_words(inside))
        if _looks_like_table(rows):
            found.append((bbox, rows))
    return found


def _clean_rows(rows) -> list[list[str]]:
    """Normalise cells, drop empty rows and columns that are empty in every row."""
    cleaned = [[re.sub(r"\s+", " ", c or "").strip() for c in row] for row in rows or []]
    cleaned = [r for r in cleaned if any(r)]
    if not cleaned:
        return []
    width = max(len(r) for r in cleaned)
    cleaned = [r + [""] * (width - len(r)) for r in cleaned]
    keep = [j for j in range(width) if any(r[j] for r in cleaned)]
    return [[r[j] for j in keep] for r in cleaned]


def _looks_like_table(rows: list[list[str]]) -> bool:
    """Reject figure frames, text boxes and charts that happen to be ruled."""
    if len(rows) < 2 or len(rows[0]) < 2:
        return False
    cells = [c for r in rows for c in r]
    filled = [c for c in cells if c]
    multi = sum(1 for r in rows if sum(1 for c in r if c) >= 2)
    if multi < 2 or len(filled) / len(cells) < 0.4:
        return False
    # Real cells are short; a "table" of paragraphs is a framed text box.
    return statistics.mean(len(c) for c in filled) <= 80


def _ruled_regions(page, words: list[dict]) -> list[tuple]:
    """Regions bounded by >= 2 horizontal rules of the same width (booktabs)."""
    rules = [
        (l["x0"], l["top"], l["x1"], l["bottom"])
        for l in page.lines
        if abs(l["bottom"] - l["top"]) < 2 and l["x1"] - l["x0"] >= 40
    ]
    rules += [(r["x0"], r["top"], r["x1"], r["bottom"]) for r in page.rects if r["height"] < 2 and r["width"] >= 40]
    groups: list[list[tuple]] = []
    for rule in sorted(rules, key=lambda r: r[1]):
        for group in groups:
            if abs(group[0][0] - rule[0]) <= 4 and abs(group[0][2] - rule[2]) <= 4:
                if rule[1] - group[-1][1] > 1:  # skip a rule drawn twice
                    group.append(rule)
                break
        else:
            groups.append([rule])

    verticals = [e for e in page.edges if e["orientation"] == "v" and e["bottom"] - e["top"] > 5]
    captions = [w for w in words if re.match(r"^(Table|Figure|Fig\.?)(\d+[:.]?)?$", w["text"])]
    regions = []
    for group in groups:
        run = [group[0]]
        for rule in group[1:] + [None]:
            # A caption between two rules means they belong to different tables.
            split = (
                rule is None
                or rule[1] - run[-1][1] > 400
                or any(run[-1][1] < w["top"] < rule[1] and rule[0] - 2 <= w["x0"] <= rule[2] for w in captions)
            )
            if split:
                if len(run) >= 2 and run[-1][1] - run[0][1] > 8:
                    bbox = (run[0][0] - 2, run[0][1] - 1, max(r[2] for r in run) + 2, run[-1][3] + 1)
                    # Rules with vertical lines inside are grids or figures,
                    # which the line strategy has already judged.
                    if not any(
                        _overlaps(bbox, (e["x0"] - 0.5, e["top"], e["x1"] + 0.5, e["bottom"])) for e in verticals
                    ):
                        regions.append(bbox)
                run = [rule] if rule else []
            else:
                run.append(rule)
    return regions


def _grid_from_words(words: list[dict]) -> list[list[str]]:
    """Rows from word tops, columns from x-ranges no (or almost no) row covers."""
    rows = _group_rows(words)
    if len(rows) < 2:
        return []
    left = int(min(w["x0"] for w in words))
    right = int(max(w["x1"] for w in words)) + 1
    coverage = [0] * (right - left + 1)
    for row in rows:
        covered = set()
        for w in row["words"]:
            covered.update(range(int(w["x0"]) - left, int(w["x1"]) - left + 1))
        for x in covered:
            coverage[x] += 1
    # One row may cross a gutter (a header spanning several columns).
    allowance = 1 if len(rows) >= 6 else 0
    columns: list[list[int]] = []
    gap = 99
    for x, count in enumerate(coverage):
        if count > allowance:
            if columns and gap < 4:
                columns[-1][1] = x  # a narrow dip is a space inside a cell
            else:
                columns.append([x, x])
            gap = 0
        else:
            gap += 1
    if len(columns) < 2:
        return []
    bounds = [(a + left, b + left + 1) for a, b in columns]

    def column_of(word):
        cx = (word["x0"] + word["x1"]) / 2
        return min(
            range(len(bounds)),
            key=lambda j: (
                0 if bounds[j][0] <= cx <= bounds[j][1] else min(abs(cx - bounds[j][0]), abs(cx - bounds[j][1]))
            ),
        )

    grid = []
    for row in rows:
        cells = [[] for _ in bounds]
        for w in sorted(row["words"], key=lambda w: w["x0"]):
            cells[column_of(w)].append(w["text"])
        grid.append([" ".join(c) for c in cells])
    return grid


# -- reading order and paragraphs ---------------------------------------------


def _group_rows(words: list[dict]) -> list[dict]:
    """Cluster words into text rows by their top coordinate."""
    rows: list[dict] = []
    for w in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if rows and w["top"] - rows[-1]["top"] <= _ROW_TOL:
            rows[-1]["words"].append(w)
        else:
            rows.append({"top": w["top"], "words": [w]})
    for row in rows:
        row["words"].sort(key=lambda w: w["x0"])
    return rows


def _line(words: list[dict]) -> dict:
    return {
        "kind": "line",
        "text": " ".join(w["text"] for w in words),
        "x0": min(w["x0"] for w in words),
        "x1": max(w["x1"] for w in words),
        "top": min(w["top"] for w in words),
        "bottom": max(w["bottom"] for w in words),
    }


def _crosses_middle(words: list[dict], mid: float) -> bool:
    """True for a full-width row: a word covers the centre, or the words either
    side of it are only a word-space apart (a column gutter is much wider)."""
    if any(w["x0"] < mid < w["x1"] for w in words):
        return True
    left_end = max((w["x1"] for w in words if w["x1"] <= mid), default=None)
    right_start = min((w["x0"] for w in words if w["x0"] >= mid), default=None)
    return left_end is not None and right_start is not None and right_start - left_end < 7


def _reading_streams(rows: list[dict], tables: list, width: float) -> list[list[dict]]:
    """Order lines and tables for reading, splitting two-column bands.

    A page is two-column when few rows cross the page centre.  Rows (or
    tables) that do cross it are full-width and close the current band;
    inside a band the left column is read before the right one.
    """
    mid = width / 2
    crosses = [_crosses_middle(r["words"], mid) for r in rows]
    split_rows = [r for r, c in zip(rows, crosses) if not c]
    two_column = (
        len(rows) >= 10
        and sum(crosses) / len(rows) < 0.35
        and sum(1 for r in split_rows if r["words"][0]["x1"] <= mid) >= 5
        and sum(1 for r in split_rows if r["words"][-1]["x0"] >= mid) >= 5
    )

    items = []
    for row, cross in zip(rows, crosses):
        if not two_column or cross:
            items.append((row["top"], "full", _line(row["words"])))
        else:
            left = [w for w in row["words"] if (w["x0"] + w["x1"]) / 2 < mid]
            right = [w for w in row["words"] if (w["x0"] + w["x1"]) / 2 >= mid]
            if left:
                items.append((row["top"], "left", _line(left)))
            if right:
                items.append((row["top"], "right", _line(right)))
    for bbox, table_rows in tables:
        side = "full"
        if two_column and bbox[2] <= mid + 2:
            side = "left"
        elif two_column and bbox[0] >= mid - 2:
            side = "right"
        items.append((bbox[1], side, {"kind": "table", "rows": table_rows}))
    items.sort(key=lambda it: it[0])

    # Each stream is a run of items read top to bottom: a column of a band,
    # or consecutive full-width items.
    streams: list[list[dict]] = []
    band: dict[str, list[dict]] = {"left": [], "right": []}
    full: list[dict] = []

    def close_band():
        for side in ("left", "right"):
            if band[side]:
                streams.append(band[side])
            band[side] = []

    for _top, side, item in items:
        if side == "full":
            close_band()
            full.append(item)
        else:
            if full:
                streams.append(full)
                full = []
            band[side].append(item)
    close_band()
    if full:
        streams.append(full)
    return streams


def _stream_paragraphs(stream: list[dict]) -> list[tuple[str, str]]:
    """Split a column's lines into paragraphs on vertical gaps and indents."""
    lines = [i for i in stream if i["kind"] == "line"]
    if lines:
        heights = [l["bottom"] - l["top"] for l in lines]
        gaps = [b["top"] - a["bottom"] for a, b in zip(lines, lines[1:]) if b["top"] > a["bottom"]]
        line_h = statistics.median(heights)
        usual_gap = statistics.median(gaps) if gaps else 2.0
        left = Counter(round(l["x0"]) for l in lines).most_common(1)[0][0]
        right = Counter(round(l["x1"]) for l in lines).most_common(1)[0][0]

    out: list[tuple[str, str]] = []
    para: list[str] = []
    prev = None

    def flush():
        if para:
            out.append(("prose", "\n".join(para)))
            para.clear()

    for item in stream:
        if item["kind"] == "table":
            flush()
            out.append(("table", "\n".join(CELL_SEP.join(r) for r in item["rows"])))
            prev = None
            continue
        if prev is not None:
            gap = item["top"] - prev["bottom"]
            indented = 4 <= item["x0"] - left <= 30
            prev_short = prev["x1"] < right - 0.15 * max(right - left, 1) and prev["text"][-1:] in ".?!:"
            if gap > usual_gap + 0.6 * line_h or indented or prev_short:
                flush()
        para.append(item["text"])
        prev = item
    flush()
    return out
