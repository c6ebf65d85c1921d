"""Citation metadata read from a PDF itself: its document information and its first page.

Used by `scirag ingest` for the fields a manifest leaves out, so that a folder of PDFs
cites real titles and authors. Everything here is a guess from layout, so ingest marks
each field it took from here in documents.metadata_inferred; a manifest line or a
Crossref enrichment overrides it later.

- title: the largest upright text on page 1 (lines of that size, joined, plus directly
  following lines still much larger than the body text, e.g. a subtitle);
- authors: the name-shaped lines between the title and the abstract (superscript
  affiliation marks, footnote symbols, commas, "and" and wide gaps separate names;
  e-mail, affiliation and address lines are skipped);
- arxiv_id: the arXiv stamp or an arXiv reference on page 1 (or the PDF metadata);
- doi: a DOI printed on page 1 or in the metadata; else the arXiv DOI of the arXiv id;
- year: the date of the arXiv stamp, else a copyright year, else the arXiv id's YYMM.

It needs character sizes and positions, which the block model does not keep: the
layout engine reads them from page 1 while it has the file open (``fields_of_open``),
so a PDF is opened once for its content and its metadata; ``read_pdf_meta`` opens a
file on its own (the other engines, and discovery for --dry-run / --manifest-out).
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

FIELDS = ("title", "authors", "year", "doi", "arxiv_id")

DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.I)
# new-style ids (YYMM.NNNNN, optional version) and old-style (archive/YYMMNNN)
ARXIV_RE = re.compile(r"arXiv\s*:?\s*(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?", re.I)
ARXIV_URL_RE = re.compile(r"arxiv\.org/(?:abs|pdf)/(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})", re.I)
STAMP_DATE_RE = re.compile(r"\]\s*(\d{1,2})\s+([A-Z][a-z]{2})\s+((?:19|20)\d\d)")
COPYRIGHT_RE = re.compile(r"(?:©|\(c\)|copyright)\s*((?:19|20)\d\d)", re.I)

SEPARATORS = set(",;&∗*†‡§¶⋆♯♭♮♣♠♦♥◇○•·")
SPACING_ACCENTS = {
    "´": "\u0301",
    "`": "\u0300",
    "¨": "\u0308",
    "ˆ": "\u0302",
    "˜": "\u0303",
    "¸": "\u0327",
    "ˇ": "\u030c",
    "˚": "\u030a",
    "¯": "\u0304",
    "˘": "\u0306",
    "˝": "\u030b",
}
NOT_A_NAME = re.compile(
    r"@|https?:|www\.|\d|\b(universit\w*|institut\w*|college|school|department|dept|faculty|laborator\w*|lab|labs|"
    r"research|inc|ltd|corp\w*|company|co|gmbh|centre|center|foundation|group|team|google|deepmind|openai|meta|"
    r"microsoft|facebook|amazon|nvidia|ibm|brain|ai|academy|hospital|street|road|avenue|abstract|"
    r"contributed|equal|correspondence|preprint|workshop|conference|proceedings|journal|arxiv)\b",
    re.I,
)
NAME_PARTICLES = {
    "de",
    "da",
    "del",
    "della",
    "der",
    "den",
    "di",
    "du",
    "la",
    "le",
    "van",
    "von",
    "bin",
    "al",
    "el",
    "y",
}


@dataclass
class PdfMeta:
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    doi: str | None = None
    arxiv_id: str | None = None

    def found(self) -> list[str]:
        """Names of the fields that were read (non-empty)."""
        return [f for f in FIELDS if getattr(self, f)]


@dataclass
class _Line:
    top: float
    bottom: float
    size: float  # dominant character size of the line
    words: list[list[dict]]  # words, each a list of characters (superscripts dropped)
    tokens: list[str]  # words and separator marks, in reading order
    text: str


def read_pdf_meta(path: Path) -> PdfMeta:
    """Metadata guessed from the PDF at path; empty fields when nothing credible is found.

    Raises nothing for a damaged or text-less PDF: ingest reports those through parse.py."""
    try:
        import pdfplumber

        with pdfplumber.open(str(path)) as pdf:
            chars, info = _first_page(pdf)
    except Exception:  # a PDF we cannot open has no metadata; parse.py names the error
        return PdfMeta()
    return meta_from_chars(chars, info) if chars is not None else PdfMeta()


def _first_page(pdf) -> tuple[list[dict] | None, dict]:
    """(page 1's characters, or None for a PDF without pages; the information dictionary's strings)."""
    info = {k: v for k, v in (pdf.metadata or {}).items() if isinstance(v, str)}
    if not pdf.pages:
        return None, info
    return list(pdf.pages[0].chars), info


def fields_of_open(pdf) -> dict:
    """read_pdf_meta's fields ({name: value}, the ones found) from a file pdfplumber has
    open; {} when they cannot be read. Never raises: metadata must not fail a parse."""
    try:
        chars, info = _first_page(pdf)
        meta = meta_from_chars(chars, info) if chars is not None else PdfMeta()
    except Exception:
        return {}
    return {f: getattr(meta, f) for f in meta.found()}


def meta_from_chars(chars: list[dict], info: dict | None = None) -> PdfMeta:
    info = info or {}
    upright = [c for c in chars if c.get("upright", True) and c["text"].strip()]
    rotated = "".join(c["text"] for c in chars if not c.get("upright", True))
    lines = _lines(upright)
    page_text = "\n".join(ln.text for ln in lines)
    meta = PdfMeta()

    title_lines, title_end = _title(lines)
    if title_lines:
        meta.title = _join_title(title_lines)
    info_title = _clean(info.get("Title", ""))
    if not meta.title and len(info_title.split()) >= 2 and not re.search(r"\.(pdf|dvi|tex|docx?)$", info_title, re.I):
        meta.title = info_title
    if title_lines:
        meta.authors = _authors(lines[title_end:])
    if not meta.authors and info.get("Author", "").strip():
        meta.authors = [a.strip() for a in re.split(r";|,|\band\b", info["Author"]) if a.strip()]

    sources = [rotated, page_text, info.get("Subject", ""), info.get("Keywords", "")]
    for text in sources:
        m = ARXIV_RE.search(text) or ARXIV_URL_RE.search(text)
        if m:
            meta.arxiv_id = m.group(1)
            break
    for text in sources + [info.get("doi", ""), info.get("DOI", "")]:
        m = DOI_RE.search(text.replace("\n", " "))
        if m:
            meta.doi = m.group(1).rstrip(".,;:)]}")
            break
    if not meta.doi and meta.arxiv_id:
        meta.doi = f"10.48550/arXiv.{meta.arxiv_id}"  # arXiv registers a DataCite DOI for every id
    stamp = STAMP_DATE_RE.search(rotated)
    copyright_ = COPYRIGHT_RE.search(page_text)
    if stamp:
        meta.year = int(stamp.group(3))
    elif copyright_:
        meta.year = int(copyright_.group(1))
    elif meta.arxiv_id and re.fullmatch(r"\d{4}\.\d{4,5}", meta.arxiv_id):
        meta.year = 2000 + int(meta.arxiv_id[:2])
    return meta


LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}


def _clean(text: str) -> str:
    text = "".join(LIGATURES.get(ch, ch) for ch in text)
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def _lines(chars: list[dict]) -> list[_Line]:
    """Groups characters into visual lines (top to bottom), words and separator tokens."""
    rows: list[list[dict]] = []
    for c in sorted(chars, key=lambda c: (round(c["top"]), c["x0"])):
        mid = (c["top"] + c["bottom"]) / 2
        for row in rows:
            # same line when the vertical middles are close (superscripts sit a bit higher)
            ref = row[0]
            if abs(mid - (ref["top"] + ref["bottom"]) / 2) < 0.45 * max(ref["size"], c["size"]):
                row.append(c)
                break
        else:
            rows.append([c])
    out = []
    for row in rows:
        row.sort(key=lambda c: c["x0"])
        size = statistics.median_high(
            [round(c["size"], 1) for c in row if c["text"].isalnum()] or [round(c["size"], 1) for c in row]
        )
        # words: what the line says (punctuation kept, superscripts dropped);
        # tokens: the same words with "|" wherever a mark, symbol or wide gap separates names
        words, tokens, cur, prev = [], [], [], None
        for c in _merge_accents(row):
            small = c["size"] < 0.8 * size
            gap = c["x0"] - prev["x1"] if prev is not None else 0
            if small or c["text"] in SEPARATORS:
                if cur:
                    words.append(cur)
                    tokens.append("".join(x["text"] for x in cur))
                    cur = []
                if not small and words:
                    if gap > 0.18 * size:
                        words.append([c])
                    else:
                        words[-1] = words[-1] + [c]  # "Atari," keeps its comma
                if tokens and tokens[-1] != "|":
                    tokens.append("|")
                prev = c
                continue
            if cur and gap > 0.18 * size:
                words.append(cur)
                tokens.append("".join(x["text"] for x in cur))
                if gap > 0.9 * size:
                    tokens.append("|")  # a wide gap (quad) separates names too
                cur = []
            cur.append(c)
            prev = c
        if cur:
            words.append(cur)
            tokens.append("".join(x["text"] for x in cur))
        if not words:
            continue
        text = " ".join("".join(x["text"] for x in w) for w in words)
        out.append(
            _Line(
                min(c["top"] for c in row),
                max(c["bottom"] for c in row),
                size,
                words,
                tokens,
                unicodedata.normalize("NFC", text),
            )
        )
    out.sort(key=lambda ln: ln.top)
    return out


def _merge_accents(row: list[dict]) -> list[dict]:
    """TeX prints an accent as its own glyph over the letter: fold it into that letter."""
    out: list[dict] = []
    pending = None
    for c in row:
        mark = SPACING_ACCENTS.get(c["text"])
        if mark:
            prev = out[-1] if out else None
            if prev is not None and c["x0"] < prev["x1"] - 0.1 and c["x1"] > prev["x0"]:
                out[-1] = {**prev, "text": unicodedata.normalize("NFC", prev["text"] + mark)}
            else:
                pending = mark  # the accent comes before its letter in reading order
            continue
        if pending:
            c = {**c, "text": unicodedata.normalize("NFC", c["text"] + pending)}
            pending = None
        out.append(c)
    return out


def _body_size(lines: list[_Line]) -> float:
    weights: dict[float, int] = {}
    for ln in lines:
        weights[ln.size] = weights.get(ln.size, 0) + len(ln.text)
    return max(weights, key=weights.get) if weights else 10.0


def _title(lines: list[_Line]) -> tuple[list[_Line], int]:
    """The title lines and the index of the first line after them."""
    candidates = [i for i, ln in enumerate(lines) if sum(ch.isalpha() for ch in ln.text) >= 3]
    if not candidates:
        return [], 0
    body = _body_size(lines)
    top_size = max(lines[i].size for i in candidates)
    if top_size < body * 1.05:
        return [], 0  # nothing larger than the body text: no visible title
    start = next(i for i in candidates if lines[i].size >= top_size - 0.3)
    picked = [lines[start]]
    end = start + 1
    while end < len(lines):
        ln, last = lines[end], picked[-1]
        gap = ln.top - last.bottom
        near = gap < 1.6 * last.size
        same = abs(ln.size - top_size) < 0.3
        # A smaller line goes on the title (a subtitle) only when it sits as close as the
        # title's own lines do (a line gap of about 0.3 of their size); the author block,
        # however large its type, starts after a wider gap (LaTeX's \maketitle puts 1.5 em
        # before it), and a title must not run into it (issue 25: names, affiliations,
        # e-mails and a date read as the title, no authors found).
        subtitle = ln.size >= 1.25 * body and ln.size < top_size and gap <= 0.5 * last.size
        if not near or not (same or subtitle) or _author_block(ln.text):
            break
        picked.append(ln)
        end += 1
    return picked, end


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(rf"^\s*(?:{_MONTH}\s+\d{{1,2}},?\s+(?:19|20)\d\d|\d{{1,2}}\s+{_MONTH}\s+(?:19|20)\d\d)\s*$", re.I)


def _author_block(text: str) -> bool:
    """A line that starts the author block, which a title never runs into (issue 25):
    an email address, author marks (daggers, asterisks), a date line ('June 24, 2022'),
    or a list of two or more name-shaped groups ('Tri Dao, Daniel Y. Fu')."""
    if "@" in text or re.search(r"[†‡∗§¶]", text) or _DATE.match(text):
        return True
    groups = [g.split() for g in re.split(r",|\band\b|&", text) if g.strip()]
    return len(groups) >= 2 and all(_as_name(g) for g in groups)


def _join_title(lines: list[_Line]) -> str:
    text = ""
    for ln in lines:
        part = ln.text.strip()
        if text.endswith("-") and part[:1].islower():
            text = text[:-1] + part  # a word hyphenated across the line break
        else:
            text = f"{text} {part}" if text else part
    return _clean(text)


def _authors(lines: list[_Line]) -> list[str]:
    """Names from the lines under the title, up to the abstract (at most 20 lines)."""
    names: list[str] = []
    for ln in lines[:20]:
        if re.match(r"\s*(abstract|summary|introduction|1\s+introduction|keywords)\b", ln.text, re.I):
            break
        if names and len(ln.text) > 120:
            break  # running prose: the author block is over
        groups = _split_tokens(ln.tokens)
        if any(NOT_A_NAME.search(" ".join(g)) for g in groups):
            continue  # an affiliation or address line ("University of California, Santa Barbara")
        names.extend(name for name in map(_as_name, groups) if name)
    return names


def _split_tokens(tokens: list[str]) -> list[list[str]]:
    groups, cur = [], []
    for tok in tokens:
        if tok == "|" or tok.lower() in ("and", "&"):
            if cur:
                groups.append(cur)
            cur = []
            continue
        cur.append(tok)
    if cur:
        groups.append(cur)
    out = []
    for g in groups:
        # a line of names set without separators ("Maarten Bosma Gaurav Mishra"): pairs
        if len(g) >= 4 and len(g) % 2 == 0 and all(_capitalised(w) and not w.endswith(".") for w in g):
            out.extend(g[i : i + 2] for i in range(0, len(g), 2))
        else:
            out.append(g)
    return out


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and not word.isupper() or bool(re.fullmatch(r"[A-Z]\.(-?[A-Z]\.)*", word))


def _as_name(words: list[str]) -> str | None:
    words = [w.strip(",;") for w in words if w.strip(",;")]
    if not 2 <= len(words) <= 5:
        return None
    text = " ".join(words)
    if NOT_A_NAME.search(text):
        return None
    if not all(_capitalised(w) or w.lower() in NAME_PARTICLES or "-" in w for w in words):
        return None
    if not _capitalised(words[-1]) and "-" not in words[-1]:
        return None
    return _clean(text)
