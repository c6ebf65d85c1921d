"""The 'layout' PDF engine: pdfplumber's text layer read as a scientific paper.

The generic pdfplumber path (engines._parse_pdf_pdfplumber) only sees words and
rulings.  Papers state more than that, and this engine uses it:

* font size and weight: body text size is the most common size; headings are
  whole lines set bold or larger, numbered headings nest by their numbers
  (3 > 3.1 > 3.1.2, A > A.1), appendices are top level and References is a
  section of its own whose paragraphs become 'reference' blocks;
* captions anchor tables: every 'Table N:' caption claims the rows next to it
  (above or below, decided by the rulings and the shape of the lines), in its
  own column, split from a side-by-side neighbour; rows are clustered by y,
  columns cut at x-gaps, stacked header rows flattened into 'group / column';
* captions anchor figures too: the non-prose lines next to a 'Figure N:'
  caption (tick labels, legends, boxed samples) are dropped, the caption stays;
* running heads/feet (text repeated in the page margins) and page numbers go,
  (cid:N) codes and private-use glyphs go, short lines stay;
* paragraphs are rebuilt over the whole document, so a sentence cut by a column,
  page, table or figure break is joined again; line-end hyphens are joined only
  where a word was split (end-to-end keeps its hyphen).

Extraction (pdfplumber, the slow part) and layout (pure Python) are separate
steps, so extracted pages can be cached and the layout re-run cheaply.
A page that cannot be read is skipped and named in ParsedDocument.partial.
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..blocks import CELL_SEP, Block, DocLines, ParsedDocument, clean_pdf_title

log = logging.getLogger(__name__)

ENGINE = "layout"

_X_TOL = 1.5
_CID = re.compile(r"\(cid:\d+\)")
_PRIVATE = re.compile("[\ue000-\uf8ff]")
_TABLE_CAP = re.compile(r"^(?:Table|TABLE)\s+([A-Z]?\d{1,3})\s*[:.|]")
_FIGURE_CAP = re.compile(r"^(?:Figure|FIGURE|Fig\.)\s*([A-Z]?\d{1,3})\s*[:.|]")
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(\S.*)$")
_LETTERED = re.compile(r"^(?:(?:Appendix|APPENDIX)\s+)?([A-Z](?:\.\d{1,2}){0,3})(?:\.|:)?\s+(\S.*)$")
_APPENDIX_ONLY = re.compile(r"^(?:Appendix|APPENDIX)\s+([A-Z])\.?$")
_TOP_NAMES = {
    "abstract",
    "references",
    "bibliography",
    "acknowledgements",
    "acknowledgments",
    "acknowledgement",
    "acknowledgment",
    "appendix",
    "appendices",
    "supplementary materials",
    "supplementary material",
    "contents",
    "table of contents",
    "author contributions",
    "contributions",
    "limitations",
    "ethics statement",
    "broader impact",
    "conclusion",
    "conclusions",
    "introduction",
    "related work",
    "methods",
    "references and notes",
}
_REFERENCES = {"references", "bibliography", "references and notes", "literature cited"}
_TERMINAL = (".", "?", "!", ":", ";")


# ---------------------------------------------------------------------------
# Extraction: one PageData per page (cacheable)
# ---------------------------------------------------------------------------


@dataclass
class PageData:
    number: int
    width: float
    height: float
    words: list[dict]  # text x0 x1 top bottom size bold
    rules: list[tuple]  # horizontal rules (x0, top, x1, bottom)


def _clean(text: str) -> str:
    return _PRIVATE.sub("", _CID.sub("", text))


def _glyphs(*ranges: tuple[int, str]) -> dict[int, str]:
    """{slot: character} from (first slot, the characters of the following slots)."""
    return {first + k: ch for first, chars in ranges for k, ch in enumerate(chars) if ch != "\0"}


_AZ = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# The TeX encodings of the maths fonts set at text size (OML: cmmi, OMS: cmsy) and the
# symbol fonts papers use. pdfminer gives '(cid:N)' for a glyph of a font it cannot name,
# and these fonts' codes are their slots: CMMI's 15 is ϵ, CMSY's 0 the minus. Slots that
# are pieces of larger glyphs (hooks, the negation slash) map to nothing ("\0"); so does
# all of CMEX (display-size sums, integrals and delimiters, drawn from pieces and tall
# enough to break the line they stand on).
_TEX_GLYPHS = {
    "CMMI": _glyphs(
        (0, "ΓΔΘΛΞΠΣΥΦΨΩαβγδϵζηθικλμνξπρστυϕχψωεϑϖϱςφ↼↽⇀⇁\0\0▹◃0123456789.,</>⋆∂"),
        (65, _AZ + "♭♮♯⌣⌢ℓ" + _AZ.lower() + "ıȷ℘"),
    ),
    "CMSY": _glyphs(
        (0, "−·×∗÷⋄±∓⊕⊖⊗⊘⊙◯∘•≍≡⊆⊇≤≥⪯⪰∼≈⊂⊃≪≫≺≻←→↑↓↔↗↘≃⇐⇒⇑⇓⇔↖↙∝′∞∈∋△▽\0\0∀∃¬∅ℜℑ⊤⊥ℵ"),
        (65, _AZ + "∪∩⊎∧∨⊢⊣⌊⌋⌈⌉{}⟨⟩|‖↕⇕\\≀√⨿∇∫⊔⊓⊑⊒§†‡¶♣♦♥♠"),
    ),
    "MSAM": _glyphs((3, "□■"), (88, "✓")),
    "ZAPFDINGBATS": _glyphs((0x33, "✓✔✕✖✗✘")),
    "DINGBATS": _glyphs((0x33, "✓✔✕✖✗✘")),
}
_TEX_FONT = re.compile(r"^(?:[A-Z]{6}\+)?(CMMIB?|CMSY|CMBSY|MSAM|ZAPFDINGBATS|DINGBATS)\d*$", re.I)


def _tex_glyphs(text: str, fontname: str) -> str:
    """'(cid:N)' codes of a TeX maths or symbol font as the characters they stand for;
    codes of any other font stay as they are (_clean drops them: no guessing)."""
    if "(cid:" not in text:
        return text
    m = _TEX_FONT.match(fontname or "")
    if not m:
        return text
    family = m.group(1).upper()
    table = _TEX_GLYPHS[{"CMMIB": "CMMI", "CMBSY": "CMSY"}.get(family, family)]
    return _CID.sub(lambda c: table.get(int(c.group(0)[5:-1]), ""), text)


def word_text(text: str, fontname: str) -> str:
    """A pdfplumber word's text as both PDF engines keep it: glyph codes of TeX's maths
    and symbol fonts read as their characters, any other '(cid:N)' code and private-use
    glyph dropped, surrounding blanks trimmed ('' when nothing readable is left)."""
    return _clean(_tex_glyphs(text, fontname)).strip()


def word_text_of_chars(text: str, chars: list[dict]) -> str:
    """word_text for a word whose glyphs may come from several fonts (the generic
    pdfplumber engine cuts words whatever their fonts): each '(cid:N)' code is read in
    the font of the glyph that carries it, the rest of the word's text (ligatures
    already expanded by pdfplumber) stays as it is."""
    fonts = iter([c.get("fontname", "") for c in chars if "(cid:" in c.get("text", "")])
    return word_text(_CID.sub(lambda m: _tex_glyphs(m.group(0), next(fonts, "")), text), "")


def extract_page(page, number: int) -> PageData:
    words = []
    for w in page.extract_words(x_tolerance=_X_TOL, y_tolerance=3, extra_attrs=["size", "fontname"]):
        if not w.get("upright", True):
            continue
        font = w.get("fontname", "")
        text = word_text(w["text"], font)
        if not text:
            continue
        words.append(
            {
                "text": text,
                "x0": w["x0"],
                "x1": w["x1"],
                "top": w["top"],
                "bottom": w["bottom"],
                "size": round(float(w.get("size", 0)), 1),
                "bold": bool(re.search(r"bold|black|heavy|semibold|medi|cmbx|-bx|\bbx", font, re.I)),
            }
        )
    rules = [
        (l["x0"], l["top"], l["x1"], l["bottom"])
        for l in page.lines
        if abs(l["bottom"] - l["top"]) < 2 and l["x1"] - l["x0"] >= 30
    ]
    rules += [(r["x0"], r["top"], r["x1"], r["bottom"]) for r in page.rects if r["height"] < 2 and r["width"] >= 30]
    return PageData(number, float(page.width), float(page.height), words, sorted(rules, key=lambda r: r[1]))


def extract(path: Path, meta: dict | None = None) -> tuple[list[PageData], str | None, int, str | None]:
    """(pages, title from metadata, page count, partial reason); meta, when given, takes
    the citation fields of page 1 (pdf/meta.py) read in the same open.

    A file cut short (no %%EOF at its end) that no reader opens is repaired
    from the objects before the cut (pdf_repair) and reported as partial."""
    try:
        return _extract(str(path), meta)
    except Exception:
        from .repair import looks_truncated, repair_truncated

        data = Path(path).read_bytes()
        repaired = repair_truncated(data) if looks_truncated(data) else None
        if repaired is None:
            raise
        import io

        pages, title, total, partial = _extract(io.BytesIO(repaired[0]))
        with_text = sum(1 for p in pages if p.words)
        reason = f"truncated file (its end is missing): {repaired[1]} page(s) recovered, {with_text} with text"
        return pages, title, total, reason + (f"; {partial}" if partial else "")


def _extract(source, meta: dict | None = None) -> tuple[list[PageData], str | None, int, str | None]:
    import pdfplumber

    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    pages: list[PageData] = []
    failed: list[str] = []
    with pdfplumber.open(source) as pdf:
        if meta is not None:
            from .meta import fields_of_open

            meta.update(fields_of_open(pdf))
        total = len(pdf.pages)
        for number, page in enumerate(pdf.pages, start=1):
            try:
                pages.append(extract_page(page, number))
            except Exception as exc:  # one unreadable page must not lose the others
                failed.append(f"page {number}: {exc.__class__.__name__}")
            finally:
                page.flush_cache()
        try:
            title = clean_pdf_title((pdf.metadata or {}).get("Title"))
        except Exception:
            title = None
    partial = f"{len(failed)} of {total} pages unreadable ({'; '.join(failed[:5])})" if failed else None
    return pages, title, total, partial


def parse_pdf_layout(path: Path) -> ParsedDocument:
    meta: dict = {}
    pages, title, total, partial = extract(path, meta)
    doc = layout(pages)
    doc.meta = meta
    doc.title = doc.title or title
    doc.pages = total
    doc.partial = partial
    return doc


# ---------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------


# Two words on one baseline whose glyphs are closer than this share of the type size
# (em) are one word. The PDF extractor splits a word where the font or size changes: a
# decimal point or minus set in the math font ("28" "." "4"), a small-caps heading ("A"
# "TTENTION"). Small capitals are letter-spaced by about 0.05 em (0.6 pt in a 12 pt
# heading, 0.72 pt in a 14.3 pt title), italic corrections reach 0.1 em; a space between
# words is at least 0.16 em (a thin space in maths; 0.2 em in a tightly justified line)
# in the nine papers of the PDF benchmark and the SciTab paper.
_TOUCHING_EM = 0.1
# A raised or lowered word (an exponent, an index, a footnote mark) is glued on only when
# its glyphs touch (under 0.6 pt, as before: '10' '−9' is one number); a script's size
# says nothing about the spacing of the line it stands on.
_TOUCHING_SCRIPT = 0.6


def join_words(words: list[dict]) -> str:
    """The text of words in reading order: a space between two words, none between
    two whose glyphs touch (one word split at a font or size change), so numbers stay
    whole (28.4, 0.1, 10−9) and small capitals join (ATTENTION DISTANCE). On a shared
    baseline touching is judged in the larger of the two words' sizes."""
    out = ""
    prev = None
    for w in words:
        if prev is not None:
            gap = w["x0"] - prev["x1"]
            if gap >= 2.5:  # wider than 0.1 em of text up to 25 pt: a space (the common case)
                out += " "
            else:
                size = max(w.get("size") or 0.0, prev.get("size") or 0.0) or 10.0
                baseline = abs(w.get("bottom", 0.0) - prev.get("bottom", 0.0)) <= 0.15 * size
                out += "" if gap < (_TOUCHING_EM * size if baseline else _TOUCHING_SCRIPT) else " "
        out += w["text"]
        prev = w
    return out


@dataclass
class Line:
    page: int
    side: str  # left | right | full
    words: list[dict]
    text: str = ""
    x0: float = 0.0
    x1: float = 0.0
    top: float = 0.0
    bottom: float = 0.0
    size: float = 0.0
    bold: bool = False
    role: str = "text"  # text | heading | caption | table | figure | drop
    level: int | None = None

    def __post_init__(self):
        self.words.sort(key=lambda w: w["x0"])
        self.text = join_words(self.words)
        self.x0 = min(w["x0"] for w in self.words)
        self.x1 = max(w["x1"] for w in self.words)
        self.top = min(w["top"] for w in self.words)
        self.bottom = max(w["bottom"] for w in self.words)
        chars = [(len(w["text"]), w) for w in self.words]
        n = sum(c for c, _ in chars) or 1
        self.size = self._main_size(chars)
        self.bold = sum(c for c, w in chars if w["bold"]) / n >= 0.9

    @staticmethod
    def _main_size(chars) -> float:
        weight: Counter = Counter()
        for c, w in chars:
            weight[w["size"]] += c
        return weight.most_common(1)[0][0]


def _rows(words: list[dict]) -> list[list[dict]]:
    """Words sharing most of their height form one row (superscripts join their line).

    A row keeps the vertical extent of its main-size word; it never grows with
    every word that joins, or a tall glyph would chain many rows into one."""
    rows: list[list[dict]] = []
    anchors: list[list[float]] = []  # top, bottom, size
    for w in sorted(words, key=lambda w: (w["top"], w["x0"])):
        h = max(w["bottom"] - w["top"], 1.0)
        for row, b in zip(rows[-3:], anchors[-3:]):
            overlap = min(b[1], w["bottom"]) - max(b[0], w["top"])
            if overlap >= 0.5 * min(h, b[1] - b[0]):
                row.append(w)
                if w["size"] > b[2] + 0.5 and h < 2.5 * max(w["size"], 1.0):
                    b[0], b[1], b[2] = w["top"], w["bottom"], w["size"]
                break
        else:
            rows.append([w])
            anchors.append([w["top"], w["bottom"], w["size"]])
    return rows


def _crosses(words: list[dict], mid: float) -> bool:
    if any(w["x0"] < mid - 1 and w["x1"] > mid + 1 for w in words):
        return True
    left = max((w["x1"] for w in words if w["x1"] <= mid + 1), default=None)
    right = min((w["x0"] for w in words if w["x0"] >= mid - 1), default=None)
    return left is not None and right is not None and right - left < 7


def page_lines(page: PageData, doc_two_col: bool = False) -> tuple[list[Line], bool]:
    """Lines of a page, split at the gutter when the page is set in two columns.

    doc_two_col: most pages of the document show a clear gutter; then a page
    whose right column is mostly a figure is still read as two columns."""
    rows = _rows(page.words)
    mid = page.width / 2
    crosses = [_crosses(r, mid) for r in rows]
    split = [r for r, c in zip(rows, crosses) if not c]
    # Rows with text on both sides of an empty gutter at the centre are the
    # mark of two columns (single-column text has no gap there); figures and
    # full-width tables cross the centre, so their share alone decides nothing.
    # A two-column table in single-column text has a gutter too, but its left
    # cells do not start at the page's text margin, nor its right cells at one x.
    margin = min((min(w["x0"] for w in r) for r in rows), default=0)
    both = [r for r in split if min(w["x0"] for w in r) < mid - 1 and max(w["x1"] for w in r) > mid + 1]
    starts = Counter(round(min(w["x0"] for w in r if w["x0"] >= mid - 1)) for r in both)
    right_start = starts.most_common(1)[0][0] if starts else 0
    gutter = sum(
        1
        for r in both
        if min(w["x0"] for w in r) <= margin + 6
        and abs(min(w["x0"] for w in r if w["x0"] >= mid - 1) - right_start) <= 3
    )
    two_col = len(rows) >= 10 and (
        gutter >= 8
        or (doc_two_col and sum(crosses) / len(rows) < 0.5)
        or (
            sum(crosses) / len(rows) < 0.4
            and sum(1 for r in split if max(w["x1"] for w in r) <= mid + 1) >= 5
            and sum(1 for r in split if min(w["x0"] for w in r) >= mid - 1) >= 5
        )
    )
    lines: list[Line] = []
    for row, cross in zip(rows, crosses):
        if not two_col or cross:
            lines.append(Line(page.number, "full", row))
            continue
        left = [w for w in row if (w["x0"] + w["x1"]) / 2 < mid]
        right = [w for w in row if (w["x0"] + w["x1"]) / 2 >= mid]
        if left:
            lines.append(Line(page.number, "left", left))
        if right:
            lines.append(Line(page.number, "right", right))
    return lines, two_col


# ---------------------------------------------------------------------------
# Document statistics, running heads
# ---------------------------------------------------------------------------


def _body_size(pages: list[PageData]) -> float:
    weight: Counter = Counter()
    for p in pages:
        for w in p.words:
            weight[w["size"]] += len(w["text"])
    return weight.most_common(1)[0][0] if weight else 10.0


def _margin_key(line: Line) -> str:
    return re.sub(r"\d+", "#", line.text.lower()).strip()


def _drop_running(all_lines: list[list[Line]], pages: list[PageData]) -> None:
    """Lines in the top or bottom 9% of a page whose text (digits aside) repeats
    on several pages are running heads or feet; lone numbers there are folios."""
    if not pages:
        return
    counts: Counter = Counter()
    for lines, p in zip(all_lines, pages):
        seen = set()
        for l in lines:
            if l.top < 0.09 * p.height or l.bottom > 0.91 * p.height:
                seen.add(_margin_key(l))
        counts.update(seen)
    need = max(3, len(pages) // 4)
    for lines, p in zip(all_lines, pages):
        for l in lines:
            if l.top < 0.09 * p.height or l.bottom > 0.91 * p.height:
                key = _margin_key(l)
                if counts[key] >= need or re.fullmatch(r"[#ivxlc\s\-–—/of]+", key) or key.startswith("arxiv:"):
                    l.role = "drop"


# ---------------------------------------------------------------------------
# Tables and figures, anchored on their captions
# ---------------------------------------------------------------------------


def _segments(line: Line, gap: float) -> list[list[dict]]:
    segs: list[list[dict]] = []
    for w in line.words:
        if segs and w["x0"] - segs[-1][-1]["x1"] < gap:
            segs[-1].append(w)
        else:
            segs.append([w])
    return segs


def _is_prose(line: Line, body: float, span: tuple[float, float]) -> bool:
    """A line of running text: body size, one segment, filling most of the span."""
    if abs(line.size - body) > 0.6:
        return False
    width = span[1] - span[0]
    if line.x1 - line.x0 < 0.75 * width or len(line.text.split()) < 7:
        return False
    if sum(1 for w in line.words if sum(c.isalpha() for c in w["text"]) >= 2) < 0.6 * len(line.words):
        return False  # a row of numbers, however wide

    # Justified text stretches all word spaces of a line alike, never one to a column gap.
    gaps = [b["x0"] - a["x1"] for a, b in zip(line.words, line.words[1:])]
    if gaps and max(gaps) > 0.6 * body and max(gaps) > 2.5 * statistics.median(gaps):
        return False
    return len(_segments(line, 2.0 * body)) == 1


def _caption_block(lines: list[Line], i: int, body: float) -> list[int]:
    """The caption paragraph starting at lines[i] (same side, small gaps)."""
    out = [i]
    cap = lines[i]
    j = i + 1
    while j < len(lines):
        l, prev = lines[j], lines[out[-1]]
        if l.role != "text":
            break
        if l.side != cap.side and not (cap.side == "full" and abs(l.x0 - cap.x0) < 3):
            j += 1
            continue
        if l.top - prev.bottom > 0.6 * body or _TABLE_CAP.match(l.text) or _FIGURE_CAP.match(l.text):
            break
        if abs(l.x0 - cap.x0) > 0.5 * (cap.x1 - cap.x0) and l.x1 < cap.x0:
            break
        out.append(j)
        if l.text.rstrip().endswith(".") and l.x1 < cap.x1 - 3 * body:
            break  # a short last line ends the caption
        j += 1
    return out


def _text_spans(lines: list[Line], page: PageData) -> dict:
    """The x-extent of the text of each column (and of the full width)."""
    spans = {}
    for side in ("left", "right", "full"):
        rows = [l for l in lines if l.side == side and len(l.text.split()) >= 5]
        if len(rows) >= 3:
            x0s, x1s = sorted(l.x0 for l in rows), sorted(l.x1 for l in rows)
            spans[side] = (x0s[len(x0s) // 10], x1s[(9 * len(x1s)) // 10])
    if "left" in spans and "right" in spans:
        spans["full"] = (spans["left"][0], spans["right"][1])
    return spans


def _mid_sentence(lines: list[Line], i: int, body: float) -> bool:
    """'... as shown in' / 'Table 4. We have ...': a reference wrapped to a line
    start, not a caption (the line above runs on without a full stop)."""
    cap = lines[i]
    above = [l for l in lines if l.side == cap.side and l.bottom <= cap.top + 1 and l.role == "text"]
    if not above:
        return False
    prev = max(above, key=lambda l: l.bottom)
    return (
        cap.top - prev.bottom < 0.5 * body
        and abs(prev.size - cap.size) < 0.5
        and not prev.text.rstrip().endswith(_TERMINAL)
        and len(prev.text.split()) >= 6
    )


def _span_of_side(side: str, page: PageData, two_col: bool) -> tuple[float, float]:
    spans = getattr(page, "spans", None) or {}
    if side in spans:
        return spans[side]
    mid = page.width / 2
    if side == "left":
        return (0.0, mid)
    if side == "right":
        return (mid, page.width)
    return (0.0, page.width)


def _in_span(line: Line, span: tuple[float, float]) -> bool:
    cx = (line.x0 + line.x1) / 2
    return span[0] - 1 <= cx <= span[1] + 1 and line.x0 >= span[0] - 45 and line.x1 <= span[1] + 45


def _region(
    lines: list[Line], cap_idx: list[int], span, direction: int, body: float, page: PageData, kind: str
) -> list[int]:
    """Indexes of the lines of the table/figure next to a caption, walking away from it."""
    cap_top = min(lines[i].top for i in cap_idx)
    cap_bottom = max(lines[i].bottom for i in cap_idx)
    # Other captions and lines claimed by another table stay in the walk: they end it.
    cands = [
        i
        for i, l in enumerate(lines)
        if i not in cap_idx and l.role in ("text", "caption", "table", "figure") and _in_span(l, span)
    ]
    if direction > 0:
        cands = sorted((i for i in cands if lines[i].top >= cap_bottom - 1), key=lambda i: lines[i].top)
    else:
        cands = sorted((i for i in cands if lines[i].bottom <= cap_top + 1), key=lambda i: -lines[i].bottom)
    # Only rules inside this span: a wider rule belongs to a wider table.
    rules = [r for r in page.rules if r[0] >= span[0] - 15 and r[2] <= span[1] + 15]
    out: list[int] = []
    edge = cap_bottom if direction > 0 else cap_top
    stopped_by_prose = None
    for i in cands:
        l = lines[i]
        gap = (l.top - edge) if direction > 0 else (edge - l.bottom)
        if l.role != "text" or _TABLE_CAP.match(l.text) or _FIGURE_CAP.match(l.text) or _section_heading(l, body):
            break
        limit = (3.0 if kind == "table" else 6.0) * body
        if gap > limit:
            break
        own = span if l.side == "full" else _span_of_side(l.side, page, True)
        clipped = (max(own[0], span[0]), min(own[1], span[1]))
        # A row with a long label can look like prose; a rule already crossed on
        # the way and another one shortly beyond the line say it is inside a table.
        near = (cap_bottom, l.top) if direction > 0 else (l.bottom, cap_top)
        crossed = any(near[0] - 2 <= r[1] <= near[1] + 2 for r in rules)
        beyond = any(0 <= ((r[1] - l.bottom) if direction > 0 else (l.top - r[1])) <= 6 * body for r in rules)
        prose = _is_prose(l, body, own) or (own != span and _is_prose(l, body, clipped))
        if prose and not (crossed and beyond):
            stopped_by_prose = l
            break  # table rows and figure labels are never full runs of body text
        out.append(i)
        edge = l.bottom if direction > 0 else l.top
    # The short first or last line of the paragraph that stopped the walk is prose too.
    while out and stopped_by_prose is not None:
        l = lines[out[-1]]
        gap = (stopped_by_prose.top - l.bottom) if direction > 0 else (l.top - stopped_by_prose.bottom)
        if abs(l.size - body) <= 0.6 and len(_segments(l, 0.9 * body)) == 1 and gap < 0.6 * body:
            stopped_by_prose = l
            out.pop()
        else:
            break
    return out


def _tableness(lines: list[Line], idx: list[int], body: float) -> float:
    if not idx:
        return 0.0
    multi = sum(1 for i in idx if len(_segments(lines[i], 0.9 * body)) >= 2)
    return multi / len(idx) + 0.1 * min(len(idx), 5)


def _rules_near(page: PageData, span, y: float, direction: int, body: float) -> bool:
    for r in page.rules:
        if r[0] < span[1] and r[2] > span[0]:
            d = (r[1] - y) if direction > 0 else (y - r[1])
            if -1 <= d <= 2.5 * body:
                return True
    return False


def _grid(words: list[dict], body: float) -> list[list[dict]]:
    """Rows (lists of words) of a table region, top to bottom."""
    return [sorted(r, key=lambda w: w["x0"]) for r in _rows(words)]


def _columns(rows: list[list[dict]], body: float) -> list[tuple[float, float]]:
    """Column x-ranges: gaps that (almost) no row covers."""
    if not rows:
        return []
    left = int(min(w["x0"] for r in rows for w in r))
    right = int(max(w["x1"] for r in rows for w in r)) + 1
    coverage = [0] * (right - left + 2)
    for r in rows:
        covered = set()
        for w in r:
            covered.update(range(int(w["x0"]) - left, int(w["x1"]) - left + 1))
        for x in covered:
            coverage[x] += 1
    allowance = max(1, len(rows) // 8) if len(rows) >= 6 else 0
    min_gap = max(3.0, 0.35 * body)
    cols: list[list[int]] = []
    gap = 99
    for x, c in enumerate(coverage):
        if c > allowance:
            if cols and gap < min_gap:
                cols[-1][1] = x
            else:
                cols.append([x, x])
            gap = 0
        else:
            gap += 1
    return [(a + left, b + left + 1) for a, b in cols]


def _col_of(w: dict, bounds: list[tuple[float, float]]) -> int:
    cx = (w["x0"] + w["x1"]) / 2
    return min(
        range(len(bounds)),
        key=lambda j: 0 if bounds[j][0] <= cx <= bounds[j][1] else min(abs(cx - bounds[j][0]), abs(cx - bounds[j][1])),
    )


# Letter-spaced fonts split a decimal into words ("65", ".", "99"): inside a cell a
# point between two digits always belongs to one number, and answers quote cells verbatim.
_SPLIT_DECIMAL = re.compile(r"(?<=\d) ?\. ?(?=\d)")


def _cells(row: list[dict], bounds) -> list[str]:
    cells: list[list[dict]] = [[] for _ in bounds]
    for w in row:
        cells[_col_of(w, bounds)].append(w)
    return [_SPLIT_DECIMAL.sub(".", join_words(c)) for c in cells]


def _header_count(rows: list[list[dict]], page: PageData, span, body: float) -> int:
    """Header rows: those above the first rule that lies inside the table, else
    the leading rows without any number."""
    top = min(w["top"] for w in rows[0])
    bottom = max(w["bottom"] for w in rows[-1])
    # Full-width rules only: a partial rule (cmidrule) under a group label sits inside the header.
    left = min(w["x0"] for r in rows for w in r)
    right = max(w["x1"] for r in rows for w in r)
    inner = [
        r[1]
        for r in page.rules
        if r[0] < span[1] and r[2] > span[0] and top + 2 < r[1] < bottom - 2 and r[2] - r[0] >= 0.8 * (right - left)
    ]
    if inner:
        first = min(inner)
        n = sum(1 for r in rows if max(w["bottom"] for w in r) <= first + 1)
        if 1 <= n <= 4:
            return n
    n = 0
    for r in rows[:3]:
        if any(re.search(r"\d", w["text"]) and re.fullmatch(r"[\d.,±%()+\-−\s]+", w["text"]) for w in r[1:]):
            break
        n += 1
    return max(1, min(n, 2))


def _flatten_header(hrows: list[list[dict]], bounds, body: float) -> list[str]:
    """One name per column.  An upper header cell over several columns is a
    group ('0-shot' -> '0-shot / acc'); one over a single column is the first
    line of a stacked header ('FEV' over 'ACC' -> 'FEV ACC')."""
    names = [""] * len(bounds)
    for k, row in enumerate(hrows):
        innermost = k == len(hrows) - 1
        for seg in _row_segments(row, body):
            if innermost:
                # The innermost row: every word names the column it stands in.
                for j in sorted({_col_of(w, bounds) for w in seg}):
                    part = join_words([w for w in seg if _col_of(w, bounds) == j])
                    names[j] = f"{names[j]} {part}".strip()
                continue
            x0, x1 = seg[0]["x0"], seg[-1]["x1"]
            text = join_words(seg)
            cover = [j for j, b in enumerate(bounds) if b[0] < x1 - 1 and b[1] > x0 + 1] or [_col_of(seg[0], bounds)]
            for j in cover:
                names[j] = f"{names[j]} {text}".strip() + (" /" if len(cover) > 1 else "")
    return [re.sub(r"\s*/$", "", n).strip() for n in names]


def _row_segments(row: list[dict], body: float) -> list[list[dict]]:
    segs: list[list[dict]] = []
    for w in sorted(row, key=lambda w: w["x0"]):
        if segs and w["x0"] - segs[-1][-1]["x1"] < 0.8 * body:
            segs[-1].append(w)
        else:
            segs.append([w])
    return segs


def _table_text(caption: str, words: list[dict], page: PageData, span, body: float) -> str:
    rows = _grid(words, body)
    bounds = _columns(rows, body)
    if len(bounds) < 2 or len(rows) < 2:
        return caption + "\n" + "\n".join(join_words(r) for r in rows)
    nh = _header_count(rows, page, span, body)
    header = _flatten_header(rows[:nh], bounds, body)
    body_rows = [_cells(r, bounds) for r in rows[nh:]]
    # A row holding only a label, followed by a row without one, is a wrapped label.
    merged: list[list[str]] = []
    i = 0
    while i < len(body_rows):
        r = body_rows[i]
        if r[0] and not any(r[1:]) and i + 1 < len(body_rows) and not body_rows[i + 1][0] and any(body_rows[i + 1][1:]):
            nxt = list(body_rows[i + 1])
            nxt[0] = r[0]
            merged.append(nxt)
            i += 2
            continue
        merged.append(r)
        i += 1
    merged = _multirow_labels(merged)
    lines = [caption, CELL_SEP.join(header)] + [CELL_SEP.join(r) for r in merged]
    return "\n".join(lines)


def _continues(prev: str, cur: str) -> bool:
    """A label fragment that continues the label above ('SEAL' / '(LM+FM,' / 'intersective)')."""
    if not prev or not cur:
        return False
    return (
        prev.count("(") > prev.count(")")
        or prev.endswith((",", "-", "+", "/"))
        or (cur.startswith("(") and "(" not in prev and not re.search(r"\d", prev[-1:]))
    )


def _multirow_labels(rows: list[list[str]]) -> list[list[str]]:
    """Row labels set over several lines (multirow cells) are joined, and the
    joined label is given to every data row of its group, including the rows
    under it with an empty label cell, so each line reads 'label | values'."""
    if not rows:
        return rows
    out = [list(r) for r in rows]
    groups: list[list[int]] = []
    for i, r in enumerate(out):
        if groups and (
            _continues(out[groups[-1][-1]][0] if out[groups[-1][-1]][0] else "", r[0]) and out[groups[-1][-1]][0]
        ):
            groups[-1].append(i)
        elif r[0]:
            groups.append([i])
    for g in groups:
        if len(g) < 2:
            continue
        label = " ".join(out[i][0] for i in g)
        for i in g:
            out[i][0] = label
    # Fill down under a multirow label: data rows with an empty label cell.
    for i in range(1, len(out)):
        if (
            not out[i][0]
            and out[i - 1][0]
            and sum(1 for c in out[i][1:] if c) >= 2
            and any(len(g) >= 2 and i - 1 in g for g in groups)
        ):
            out[i][0] = out[i - 1][0]
            for g in groups:
                if i - 1 in g:
                    g.append(i)
    return out


def _anchor(page: PageData, lines: list[Line], two_col: bool, body: float) -> list[tuple[float, str, str]]:
    """Mark caption/table/figure lines; return (top, side, table text) items."""
    out = []
    page.spans = _text_spans(lines, page)
    caps = [
        i
        for i, l in enumerate(lines)
        if l.role == "text"
        and (_TABLE_CAP.match(l.text) or _FIGURE_CAP.match(l.text))
        and not _mid_sentence(lines, i, body)
    ]
    blocks = []
    for i in caps:
        if lines[i].role != "text":
            continue
        idx = _caption_block(lines, i, body)
        kind = "table" if _TABLE_CAP.match(lines[i].text) else "figure"
        span = _span_of_side(lines[i].side, page, two_col)
        blocks.append([kind, idx, span])
        for j in idx:
            lines[j].role = "caption"
    # Side-by-side captions (overlapping in y, apart in x) share the span.
    for a in blocks:
        for b in blocks:
            if a is b or a[2] != b[2]:
                continue
            la, lb = lines[a[1][0]], lines[b[1][0]]
            if abs(la.top - lb.top) < 4 * body and (la.x1 < lb.x0 or lb.x1 < la.x0):
                cut = ((la.x1 + lb.x0) / 2) if la.x1 < lb.x0 else ((lb.x1 + la.x0) / 2)
                a[2] = (a[2][0], cut) if la.x1 < lb.x0 else (cut, a[2][1])

    def nearest(block) -> float:
        """Gap between a caption and the closest line next to it: the caption
        nearest to a table claims it first (LaTeX sets a caption close to its
        own float), so a neighbour caption cannot take it."""
        kind, idx, span = block
        top = min(lines[j].top for j in idx)
        bottom = max(lines[j].bottom for j in idx)
        below = _region(lines, idx, span, +1, body, page, kind)
        above = _region(lines, idx, span, -1, body, page, kind)
        return min((lines[below[0]].top - bottom) if below else 1e9, (top - lines[above[0]].bottom) if above else 1e9)

    tables = sorted((b for b in blocks if b[0] == "table"), key=nearest)
    for kind, idx, span in tables + [b for b in blocks if b[0] != "table"]:
        cap_text = _join_lines([lines[j] for j in idx])
        top = min(lines[j].top for j in idx)
        bottom = max(lines[j].bottom for j in idx)
        below = _region(lines, idx, span, +1, body, page, kind)
        above = _region(lines, idx, span, -1, body, page, kind)
        if kind == "table":
            rb, ra = _rules_near(page, span, bottom, +1, body), _rules_near(page, span, top, -1, body)
            sb, sa = _tableness(lines, below, body) + rb, _tableness(lines, above, body) + ra
            # LaTeX sets a caption close to its own table, further from the next float.
            gb = (lines[below[0]].top - bottom) if below else 1e9
            ga = (top - lines[above[0]].bottom) if above else 1e9
            if gb + 3 < ga:
                sb += 0.5
            elif ga + 3 < gb:
                sa += 0.5
            region = below if sb > sa else above
        else:
            region = above if above else below
        for j in region:
            lines[j].role = kind
        if kind == "table" and region:
            words = [w for j in region for w in lines[j].words]
            out.append(
                (
                    min(top, min(lines[j].top for j in region)),
                    lines[idx[0]].side,
                    _table_text(cap_text, words, page, span, body),
                )
            )
        elif kind == "table":
            out.append((top, lines[idx[0]].side, cap_text))
        else:
            for j in idx:
                lines[j].role = "text"  # a figure caption stays in the prose
                lines[j].level = -1  # ... as a paragraph of its own
    return out


# ---------------------------------------------------------------------------
# Headings
# ---------------------------------------------------------------------------


def _heading_number(text: str) -> tuple[str | None, str]:
    m = _NUMBERED.match(text)
    if m:
        return m.group(1), m.group(2)
    m = _APPENDIX_ONLY.match(text)
    if m:
        return m.group(1), ""
    m = _LETTERED.match(text)
    if m and (m.group(2)[:1].isupper() or text.lower().startswith("appendix")) and m.group(1) != "I":
        return m.group(1), m.group(2)
    return None, text


def _small_caps(line: Line, body: float) -> bool:
    """A heading set in small capitals ('4.2 ATTENTION DISTANCE' drawn as 'A' + 'TTENTION'
    in a smaller size, joined by join_words): every letter a capital, two sizes of
    capitals, the larger one at least the body size. A figure label in capitals has
    one size."""
    letters = [c for c in line.text if c.isalpha()]
    if len(letters) < 4 or not all(c.isupper() for c in letters):
        return False
    sizes = {w["size"] for w in line.words if any(c.isalpha() for c in w["text"])}
    return len(sizes) >= 2 and max(sizes) >= body - 0.5 and max(sizes) - min(sizes) >= 1.0


def _candidate(line: Line, body: float) -> bool:
    text = line.text.strip()
    words = text.split()
    if not (2 <= len(text) <= 120) or len(words) > 14 or line.role != "text" or line.level == -1:
        return False
    if _small_caps(line, body) and len(words) <= 10 and not text.endswith((".", ",", ";")):
        # Small capitals make a heading with a section number or a heading's name; a
        # diagram's label in small capitals has neither (it may still be bold or large).
        name = re.sub(r"^\d+\.?\s*", "", text).lower().strip(" .:")
        if _heading_number(text)[0] is not None or name in _TOP_NAMES:
            return True
    if not (line.bold or line.size >= body + 1.5):
        return False
    known = text.lower().strip(" .:") in _TOP_NAMES
    if line.size < body - 0.6 and not (known and line.bold):
        return False  # small bold text is a label; a small bold 'Abstract' is still the abstract
    if text.endswith((",", ";")):
        return False
    if text.endswith(".") and not (
        re.fullmatch(r"[A-Z0-9.]+\.", text) or known or (_heading_number(text)[0] is not None and len(words) <= 8)
    ):
        return False  # a sentence; 'Appendix B. Parity.' style headings end with a stop too
    if sum(c.isalpha() for c in text) < 0.5 * len(text.replace(" ", "")):
        return False
    return True


def _bold_prefix(line: Line) -> str | None:
    """'4.2 Primer Transferability' when figure tick labels in another size share its row."""
    if line.bold or not line.words or not line.words[0]["bold"]:
        return None
    prefix = []
    for w in line.words:
        if not w["bold"]:
            break
        prefix.append(w)
    rest = line.words[len(prefix) :]
    if (
        len(prefix) >= 2
        and rest
        and all(abs(w["size"] - prefix[0]["size"]) > 0.5 or re.fullmatch(r"[-−]?[\d.,]+%?", w["text"]) for w in rest)
    ):
        return " ".join(w["text"] for w in prefix)
    return None


def _section_heading(line: Line, body: float) -> bool:
    """A numbered or well-known heading: table and figure regions stop at one."""
    if not _candidate(line, body):
        return False
    number, title = _heading_number(line.text.strip())
    name = re.sub(r"^\d+\.?\s*", "", line.text.strip()).lower().strip(" .:")
    return (number is not None and bool(title)) or name in _TOP_NAMES


def _classify_headings(seq: list[Line], body: float) -> None:
    started = False
    last_level = 1
    last_size = body
    last_letter = None
    seen_numbered = False
    for k, l in enumerate(seq):
        if l.role != "text":
            continue
        prefix = _bold_prefix(l)
        if prefix and _NUMBERED.match(prefix):
            l.words = [w for w in l.words if w["bold"]][: len(prefix.split())]
            l.__post_init__()
        if not _candidate(l, body):
            continue
        text = l.text.strip()
        number, title = _heading_number(text)
        if number is None and last_letter == "H" and re.match(r"^I\.?\s+[A-Z]", text):
            number, title = "I", text[1:].lstrip(". ")  # appendix I, not the pronoun
        name = re.sub(r"^\d+\.?\s*", "", text).lower().strip(" .:")
        if number is not None and number.split(".")[0] == "0":
            continue
        if number is not None and number[:1].isalpha() and not (seen_numbered or text.lower().startswith("appendix")):
            continue  # 'A Study of ...' before any numbered section is a title, not appendix A
        if number is not None and not title and not _APPENDIX_ONLY.match(text):
            continue
        if not started:
            # Title and authors come before the first real heading.
            if name in _TOP_NAMES or (number is not None and re.fullmatch(r"1|I", number.split(".")[0])):
                started = True
            else:
                continue
        if number is not None:
            level = number.count(".") + 1
        elif name in _TOP_NAMES:
            level = 1
        elif not _title_like(text):
            continue
        elif l.size > last_size + 0.5:
            level = 1
        else:
            level = min(6, last_level + 1)
        l.role, l.level = "heading", min(level, 6)
        if number is not None or name in _TOP_NAMES:
            last_level, last_size = level, l.size
        if number is not None and number[:1].isalpha():
            last_letter = number[:1]
        seen_numbered = seen_numbered or (number is not None and number[:1].isdigit())
        # A heading wrapped onto a second line: same style, right below it.
        for nxt in seq[k + 1 : k + 3]:
            if (
                nxt.role == "text"
                and nxt.page == l.page
                and nxt.side == l.side
                and 0 <= nxt.top - l.bottom < 0.6 * body
                and nxt.bold == l.bold
                and abs(nxt.size - l.size) < 0.3
                and len(nxt.text.split()) <= 8
                and _heading_number(nxt.text.strip())[0] is None
                and not nxt.text.rstrip().endswith(".")
            ):
                l.text = l.text + " " + nxt.text.strip()
                l.bottom = nxt.bottom
                nxt.role = "drop"
            else:
                break


def _title_like(text: str) -> bool:
    """An unnumbered heading ('Representation Function', 'Model Training'):
    capitalised words, no sentence punctuation, no code."""
    if text.endswith(("?", ":", "!")) or re.search(r"[\[\]{}=<>_/\\]|\w\(|\.\s+\S", text):
        return False
    words = [
        w
        for w in text.split()
        if w.lower()
        not in ("a", "an", "and", "of", "the", "for", "in", "on", "to", "with", "by", "from", "via", "vs.", "at", "or")
    ]
    return bool(words) and sum(w[:1].isupper() or w[:1].isdigit() for w in words) / len(words) >= 0.6


# ---------------------------------------------------------------------------
# Paragraphs
# ---------------------------------------------------------------------------


def _join_lines(lines: list[Line]) -> str:
    """Lines of a paragraph as one line; a line-end hyphen joins the next word.

    The hyphen goes only where a word was split ('hyphen-' + 'ation'); it stays
    in compounds ('end-' + 'to-end'), after acronyms and numbers ('RNN-' +
    'style', 'OPT-' + '175B') and before a capital ('Multi-' + 'Layer')."""
    out = ""
    for l in lines:
        t = l.text.strip()
        if not out:
            out = t
            continue
        m = re.search(r"(\S*?)([A-Za-z0-9])-$", out)
        if m and t and not out.endswith("--"):
            fragment = m.group(1) + m.group(2)
            nxt = t.split()[0].rstrip(".,;:)")
            split_word = (
                t[:1].islower() and "-" not in fragment and "-" not in nxt and not re.search(r"\d|[A-Z]{2}", fragment)
            )
            out = (out[:-1] if split_word else out) + t
        else:
            out += " " + t
    return out


def _is_small(l: Line, body: float) -> bool:
    return l.size < body - 1.2


def layout(pages: list[PageData]) -> ParsedDocument:
    body = _body_size(pages)
    all_lines: list[list[Line]] = []
    cols: list[bool] = []
    first = [page_lines(p)[1] for p in pages]
    doc_two = sum(first) > len(pages) / 2
    for p in pages:
        lines, two = page_lines(p, doc_two)
        all_lines.append(lines)
        cols.append(two)
    _drop_running(all_lines, pages)
    seq: list = []  # Lines and ('table', text, page) items in reading order
    title = None
    for p, lines, two in zip(pages, all_lines, cols):
        tables = _anchor(p, lines, two, body)
        # Table captions travel inside their table item; figure captions are text again.
        items: list[tuple] = [(l.top, l.side, l) for l in lines if l.role == "text"]
        items += [(top, side, ("table", text, p.number)) for top, side, text in tables]
        seq.extend(_reading_order(items, two))
        if p.number == 1 and title is None:
            big = [l for l in lines if l.role == "text" and l.top < 0.4 * p.height]
            if big:
                size = max(l.size for l in big)
                if size >= body + 2:
                    title = " ".join(l.text for l in big if l.size == size)[:300]
    # Headings are judged in reading order: numbering and the styles seen so far decide levels.
    _classify_headings([it for it in seq if isinstance(it, Line)], body)
    return ParsedDocument(blocks=_blocks(seq, body), parser=ENGINE, title=title)


def _reading_order(items: list[tuple], two: bool) -> list:
    """Full-width items close a band; inside a band the left column comes first."""
    items.sort(key=lambda it: it[0])
    out: list = []
    band: dict[str, list] = {"left": [], "right": []}
    for _top, side, item in items:
        if side == "full" or not two:
            out.extend(band["left"] + band["right"])
            band = {"left": [], "right": []}
            out.append(item)
        else:
            band[side].append(item)
    out.extend(band["left"] + band["right"])
    return out


def _blocks(seq: list, body: float) -> list[Block]:
    """Headings, tables and paragraphs in reading order.

    Asides (figure captions, footnotes in small type) become paragraphs of their
    own without closing the paragraph they interrupt, and a paragraph cut by a
    column, page, table or figure break without a full stop goes on."""
    out = DocLines()
    para: list[Line] = []
    aside: list[Line] = []
    in_refs = False
    ref_level = 1
    broken = False  # a table or an aside came between para and the next line

    def emit(lines: list[Line]):
        if lines:
            text = _join_lines(lines)
            if text.strip():
                out.add("reference" if in_refs else "prose", text, lines[0].page)
            lines.clear()

    for item in seq:
        if not isinstance(item, Line):
            emit(aside)
            if para and para[-1].text.rstrip().endswith(_TERMINAL):
                emit(para)
            out.add("table", item[1], item[2])
            broken = True
            continue
        l = item
        if l.role == "heading":
            emit(aside)
            emit(para)
            name = re.sub(r"^\d+\.?\s*", "", l.text).lower().strip(" .:")
            if in_refs and l.level is not None and l.level <= ref_level:
                in_refs = False
            if name in _REFERENCES:
                in_refs, ref_level = True, l.level or 1
            out.add("heading", l.text.strip(), l.page, level=l.level)
            broken = False
            continue
        if l.role != "text":
            continue
        if (
            l.level == -1
            or (_is_small(l, body) and para and not _is_small(para[-1], body))
            or (aside and _same_para(aside[-1], l, body))
        ):
            if aside and not _same_para(aside[-1], l, body):
                emit(aside)
            aside.append(l)
            broken = True
            continue
        emit(aside)
        if para:
            prev = para[-1]
            crossed = l.page != prev.page or l.side != prev.side
            open_end = not prev.text.rstrip().endswith(_TERMINAL)
            if _same_para(prev, l, body) and not broken:
                pass
            elif open_end and (crossed or (broken and (l.text[:1].islower() or l.text[:1] in "([,;"))):
                pass  # the sentence goes on after the break
            else:
                emit(para)
        if in_refs and para and re.match(r"^(\[\d+\]|\d+\.\s)", l.text):
            emit(para)
        para.append(l)
        broken = False
    emit(aside)
    emit(para)
    return out.blocks


def _same_para(prev: Line, l: Line, body: float) -> bool:
    if l.page != prev.page or l.side != prev.side:
        return False
    gap = l.top - prev.bottom
    if gap > 0.75 * body or gap < -2:
        return False
    if _is_small(prev, body) != _is_small(l, body):
        return False  # footnotes are paragraphs of their own
    if 4 <= l.x0 - prev.x0 <= 30 and prev.text.rstrip().endswith(_TERMINAL):
        return False  # first-line indent
    return True
