"""Structure-aware chunking with a section hierarchy.

Generic splitters lose the two signals that matter most in technical writing:
where a statement sits in the section hierarchy, and whether a table survives
in one piece.  This chunker keeps both:

* text is normalised (form feeds, page numbers, end-of-line hyphenation, ...);
* prose is re-segmented into paragraphs; fragments under 20 characters are
  dropped as extraction noise (headings and table rows never are);
* headings are detected (numbered, ALL CAPS, short Title Case) when the parser
  could not mark them, and a section path is kept as a stack;
* table-like paragraphs (pipe, tab, aligned-space, numeric grids) become one
  intact chunk each;
* paragraphs merge up to a token target inside one section; an oversized
  paragraph is split on sentence boundaries;
* overlap carries trailing sentences (or a table's last two rows) into the
  next prose chunk of the same section, never across a heading;
* every heading also yields a 'section' chunk holding its whole section: the
  parent used for context enrichment and coverage-based consolidation.

Blocks from the PDF 'layout' engine are already clean: its headings and its
complete tables (caption, header, labelled rows) are taken as they are, no
short paragraph is dropped, tables carry nothing into prose and are split by
rows (caption and header repeated) only when very long, and 'reference'
blocks become prose chunks marked is_reference.

Line numbers are tracked per source line through normalisation, so every
chunk knows the exact span of source lines its own text came from.
"""

from __future__ import annotations

import bisect

import hashlib
import re
from dataclasses import dataclass, field

from scirag_helpers import text as text_rules

from .blocks import CELL_SEP, Block, ParsedDocument

NOISE_CHARS = 20  # paragraphs shorter than this are extraction noise
TABLE_CARRY_ROWS = 2  # a table hands at most this many rows to the next prose chunk
PARA_SEP = "\n\n"

# Parsers that mark headings themselves; guessing on top of them only adds
# false positives (a bold list item is not a section).
_STRUCTURED_PARSERS = {"markdown", "html", "docling", "layout"}
# Parsers whose table blocks are complete (caption line, header line, rows)
# and whose prose blocks are whole clean paragraphs: their tables take no
# caption from the text around them, hand no rows to the next prose chunk, and
# no short paragraph is dropped as noise (an equation or a result line is content).
_COMPLETE_TABLE_PARSERS = {"layout"}
TABLE_HEAD_LINES = 2  # caption and (flattened) header line of a complete table
# A table is read as a whole (a claim compares rows); it is split by rows only
# past this multiple of the prose target, with caption and header repeated.
TABLE_TARGET_FACTOR = 2.5


@dataclass
class Chunk:
    ordinal: int
    kind: str  # 'section' | 'prose' | 'table' (references: prose with is_reference)
    level: int
    parent_ordinal: int | None
    section_path: str
    heading: str | None
    is_table: bool
    body: str
    content: str
    token_count: int
    line_start: int | None
    line_end: int | None
    page_start: int | None
    page_end: int | None
    is_reference: bool = False  # a bibliography entry: citable, not retrieved by default


# ---------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|[^\w\s]")
# A chunk holds at most target tokens and target * MAX_CHARS_PER_TOKEN characters (a
# run without spaces counts as one token; issue 26).
MAX_CHARS_PER_TOKEN = 16


def count_tokens(text: str) -> int:
    """Deterministic, tokenizer-free token count (words and punctuation marks)."""
    return len(_TOKEN.findall(text))


# ---------------------------------------------------------------------------
# Spans: (line_start, line_end, page_start, page_end), any part may be None
# ---------------------------------------------------------------------------


@dataclass
class _Span:
    line_start: int | None = None
    line_end: int | None = None
    page_start: int | None = None
    page_end: int | None = None

    def merge(self, other: "_Span") -> "_Span":
        def lo(a, b):
            return b if a is None else a if b is None else min(a, b)

        def hi(a, b):
            return b if a is None else a if b is None else max(a, b)

        return _Span(
            lo(self.line_start, other.line_start),
            hi(self.line_end, other.line_end),
            lo(self.page_start, other.page_start),
            hi(self.page_end, other.page_end),
        )


def _span_of(spans) -> _Span:
    total = _Span()
    for s in spans:
        total = total.merge(s)
    return total


# ---------------------------------------------------------------------------
# Normalisation on numbered lines
# ---------------------------------------------------------------------------


@dataclass
class _Line:
    text: str
    span: _Span


_PAGE_NUMBER = re.compile(
    r"^\s*(?:(?:page|p\.)\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?\s*$"
    r"|^\s*[-–—]\s*\d{1,4}\s*[-–—]\s*$",
    re.IGNORECASE,
)
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _line_end_fragment(text: str) -> str | None:
    r"""The word a line-end hyphen cuts ("ligno" of "... ligno-"), or None. Linear: the
    regex (\S*[A-Za-z])-$ it replaces backtracked over every start of a long line
    without spaces (issue 26: a 100,000-character line took 90 s)."""
    if len(text) < 2 or text[-1] != "-" or text[-2] not in _ASCII_LETTERS:
        return None
    return text[:-1].rsplit(None, 1)[-1]


def _split_lines(text: str) -> list[str]:
    """Split into lines, turning a form feed into a line break only when it does
    not already sit next to one, so source line numbers stay aligned."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = re.sub(r"(?<=[^\n])\f(?=[^\n])", "\n", text).replace("\f", "")
    return text.split("\n")


def _numbered_lines(text: str, span: _Span) -> list[_Line]:
    lines = []
    for i, raw in enumerate(_split_lines(text)):
        line_no = None
        if span.line_start is not None:
            line_no = span.line_start + i
            if span.line_end is not None:
                line_no = min(line_no, span.line_end)
        lines.append(_Line(raw.rstrip(), _Span(line_no, line_no, span.page_start, span.page_end)))
    return lines


def _drop_page_numbers(lines: list[_Line]) -> list[_Line]:
    return [l for l in lines if not _PAGE_NUMBER.match(l.text)]


def _dehyphenate(lines: list[_Line]) -> list[_Line]:
    """Undo end-of-line hyphenation ("ligno-" + "cellulosic").

    Works on numbered lines so a joined line keeps the span of both sources.
    """
    kept = list(lines)
    out: list[_Line] = []
    i = 0
    while i < len(kept):
        line = kept[i]
        nxt = kept[i + 1] if i + 1 < len(kept) else None
        fragment = _line_end_fragment(line.text)
        if fragment is not None and nxt is not None and nxt.text[:1].islower():
            # "straw-to-\ngrain": the word is already a hyphenated compound,
            # so the line-end hyphen is a real one; "ligno-\ncellulosic" is not.
            keep_hyphen = "-" in fragment
            joined = line.text[:-1] + ("-" if keep_hyphen else "") + nxt.text.lstrip()
            kept[i + 1] = _Line(joined, line.span.merge(nxt.span))
            i += 1
            continue
        out.append(line)
        i += 1
    return out


def normalize_text(text: str) -> str:
    """Clean raw extracted text: form feeds, null bytes, CRLF, trailing spaces,
    stray page-number lines, end-of-line hyphenation, runs of blank lines."""
    lines = _dehyphenate(_drop_page_numbers(_numbered_lines(text, _Span())))
    joined = "\n".join(l.text for l in lines)
    return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")


# ---------------------------------------------------------------------------
# Headings
# ---------------------------------------------------------------------------

_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3}|[A-Z](?:\.\d{1,2}){1,3})\.?\s+(\S.*)$")
_APPENDIX = re.compile(r"^([A-Z])\.?\s+(\S.*)$")  # "A Claim Extraction Procedure"
_NUMBER_TOKEN = re.compile(r"^[(\[]?[-+−±~<>≈$€£]?\d[\d,]*(?:\.\d+)?(?:[%‰)\]]|[a-zA-Z]{0,2})?$|^[—–-]$")
_SMALL_WORDS = {
    "a",
    "an",
    "and",
    "as",
    "at",
    "by",
    "de",
    "for",
    "from",
    "in",
    "into",
    "of",
    "on",
    "or",
    "per",
    "the",
    "to",
    "via",
    "vs",
    "vs.",
    "with",
    "without",
    "versus",
    "und",
}
_CAPTION = re.compile(r"^(table|figure|fig\.|chart|plate)\s*\d", re.IGNORECASE)
# A table's caption belongs to the table: "Table 2: ..." before (or right after) it.
_TABLE_CAPTION = re.compile(r"^(table|tab\.)\s*([0-9]+|[ivxlc]+)\b", re.IGNORECASE)


def _numeric_count(tokens: list[str]) -> int:
    return sum(1 for t in tokens if _NUMBER_TOKEN.match(t.rstrip(",;:")))


def _looks_tabular(line: str) -> bool:
    return "|" in line or "\t" in line or bool(re.search(r"\S {2,}\S", line.strip()))


def _numbered_heading(line: str) -> int | None:
    """Level of a numbered heading such as '2.1 Feedstock handling' or '3. Results'."""
    m = _NUMBERED.match(line.strip())
    if not m or _looks_tabular(line):
        return None
    number, title = m.groups()
    words = title.split()
    if not title[0].isupper() or len(words) > 12 or len(title) > 100:
        return None
    if title.endswith((".", ",", ";")) or _numeric_count(words) >= 2:
        return None  # a sentence ("1.1 Million tonnes were ...") or a table row
    if number.split(".")[0] == "0":
        return None
    return min(6, number.count(".") + 1)


def _appendix_heading(line: str) -> bool:
    """'B Manual Claim Verification Procedure': an appendix letter before a
    Title Case heading (a plain 'A' article would start a sentence instead)."""
    m = _APPENDIX.match(line.strip())
    if not m or m.group(1) == "I" or not _title_case_heading(m.group(2)):
        return False
    return m.group(1) != "A" or len(m.group(2).split()) >= 2


def _caps_heading(line: str) -> bool:
    """'RESULTS AND DISCUSSION'."""
    text = line.strip()
    letters = [c for c in text if c.isalpha()]
    # Capitalised document titles run longer than Title Case sub-headings.
    if len(letters) < 4 or len(text.split()) > 14 or len(text) > 120 or _looks_tabular(text):
        return False
    if text.endswith((".", ",", ";")) or _numeric_count(text.split()) >= 2 or not _wordy(text):
        return False
    return sum(c.isupper() for c in letters) / len(letters) >= 0.9


def _wordy(text: str) -> bool:
    """Headings are words: not code (underscores, '='), not lists of names."""
    chars = [c for c in text if not c.isspace()]
    if "_" in text or "=" in text or text.count(",") >= 2:
        return False
    return sum(c.isalpha() for c in chars) / len(chars) >= 0.7


def _title_case_heading(line: str) -> bool:
    """'Sustainable Removal Fraction': short, mostly capitalised, no final stop."""
    text = line.strip()
    words = text.split()
    if not words or len(words) > 10 or len(text) > 80 or not text[0].isupper():
        return False
    if text.endswith((".", ",", ";", ":", "-")) or _looks_tabular(text) or _CAPTION.match(text):
        return False
    if "et al" in text or _numeric_count(words) >= 2 or sum(c.isalpha() for c in text) < 4:
        return False
    if not _wordy(text) or re.search(r"(^|\s)[A-Z]\.(\s|$)", text):
        return False  # initials: a byline ("J. P. Laskowski"), not a heading
    significant = [w for w in words if w.lower().strip("():,") not in _SMALL_WORDS]
    if not significant:
        return False
    capitalised = sum(1 for w in significant if w.lstrip("(\"'“")[:1].isupper() or w[:1].isdigit())
    return capitalised / len(significant) >= 0.8


def _heading_kind(line: str) -> tuple[str, int | None] | None:
    """('numbered', level) | ('caps', None) | ('title', None) | None."""
    if _CAPTION.match(line.strip()):
        return None
    level = _numbered_heading(line)
    if level:
        return "numbered", level
    if _appendix_heading(line):
        return "numbered", 1
    if _caps_heading(line):
        return "caps", None
    if _title_case_heading(line):
        return "title", None
    return None


# ---------------------------------------------------------------------------
# Tables in prose
# ---------------------------------------------------------------------------

# A run of 2+ spaces between columns; not the typewriter double space after
# a full stop, which would make ordinary plain-text prose look like a grid.
_GRID_GAP = re.compile(r"(?<=[^\s.!?:;]) {2,}(?=\S)")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _table_line_kind(line: str) -> str | None:
    """How a single line looks like a table row, if it does."""
    text = line.strip()
    if not text:
        return None
    if text.count("|") >= 2 or (_TABLE_SEPARATOR.match(text) and "|" in text):
        return "pipe"
    if "\t" in text and len([c for c in text.split("\t") if c.strip()]) >= 2:
        return "tab"
    if len(_GRID_GAP.findall(text)) >= 2:
        return "grid"
    tokens = text.split()
    numeric = _numeric_count(tokens)
    if numeric >= 2 and numeric / len(tokens) > 0.5:
        return "numeric"
    return None


def _table_text(lines: list[str], kinds: list[str]) -> str:
    """Rewrite table lines in the block model's cell format (' | ')."""
    rows = []
    for line, kind in zip(lines, kinds):
        text = line.strip()
        if kind == "pipe":
            if _TABLE_SEPARATOR.match(text):
                continue
            text = text.strip("|")
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", text)]
        elif kind == "tab":
            cells = [c.strip() for c in re.split(r"\t+", text)]
        elif kind == "grid":
            cells = re.split(r" {2,}", text)
        elif kind == "numeric":
            cells = _numeric_row_cells(text)
        else:  # header joined to a numeric grid
            cells = text.split()
        rows.append(CELL_SEP.join(cells))
    return "\n".join(rows)


def _numeric_row_cells(text: str) -> list[str]:
    """'Winter wheat 64,200 1.3' -> ['Winter wheat', '64,200', '1.3']: leading
    words form the row label, each later token is its own cell."""
    tokens = text.split()
    first_num = next((i for i, t in enumerate(tokens) if _NUMBER_TOKEN.match(t.rstrip(",;:"))), 0)
    label = " ".join(tokens[:first_num])
    return ([label] if label else []) + tokens[first_num:]


def _table_runs(lines: list[_Line]) -> list[tuple[int, int, list[str]]]:
    """(start, end_exclusive, kinds) for runs of >= 2 table-like lines."""
    kinds = [_table_line_kind(l.text) for l in lines]
    runs = []
    i = 0
    while i < len(lines):
        if kinds[i] is None:
            i += 1
            continue
        j = i
        while j < len(lines) and kinds[j] is not None:
            j += 1
        if j - i >= 2:
            start, run_kinds = i, kinds[i:j]
            # A numeric grid's header row has words only; take the line just
            # above when it has as many tokens as the first data row.
            if (
                run_kinds[0] == "numeric"
                and i > 0
                and kinds[i - 1] is None
                and len(lines[i - 1].text.split()) == len(lines[i].text.split())
            ):
                start, run_kinds = i - 1, ["header"] + run_kinds
            runs.append((start, j, run_kinds))
        i = j
    return runs


# ---------------------------------------------------------------------------
# Units: the document as a flat list of headings, tables and paragraphs
# ---------------------------------------------------------------------------


@dataclass
class _Unit:
    kind: str  # 'heading' | 'table' | 'para'
    lines: list[_Line]
    text: str
    level: int | None = None  # parser headings: the level; heuristic: see heading_source
    heading_source: str | None = None  # 'parser' | 'numbered' | 'caps' | 'title'
    reference: bool = False  # from a 'reference' block (bibliography)

    @property
    def span(self) -> _Span:
        return _span_of(l.span for l in self.lines)


def _block_units(block: Block, detect_headings: bool, min_chars: int = NOISE_CHARS) -> list[_Unit]:
    if block.kind == "reference":
        units = _block_units(
            Block("prose", block.text, None, block.page, block.line_start, block.line_end), detect_headings, min_chars
        )
        for u in units:
            u.reference = True
        return units
    span = _Span(block.line_start, block.line_end, block.page, block.page)
    if block.kind == "heading":
        text = " ".join(block.text.split())
        lines = [_Line(text, span)]
        return [_Unit("heading", lines, text, level=block.level or 1, heading_source="parser")] if text else []
    if block.kind == "table":
        # A parser's table row does not map to one source line (Markdown's |---|
        # separator, HTML rows over several lines): every row carries the whole span.
        lines = [_Line(t.rstrip(), span) for t in block.text.split("\n") if t.strip()]
        return [_Unit("table", lines, "\n".join(l.text for l in lines))] if lines else []
    units: list[_Unit] = []
    # Headings and tables are recognised on the raw lines (a joined
    # de-hyphenated line would distort line lengths); only prose is joined.
    for para in _paragraphs(_drop_page_numbers(_numbered_lines(block.text, span))):
        units.extend(_paragraph_units(para, detect_headings, min_chars))
    return units


def _paragraphs(lines: list[_Line]) -> list[list[_Line]]:
    paras, current = [], []
    for line in lines:
        if line.text.strip():
            current.append(line)
        elif current:
            paras.append(current)
            current = []
    if current:
        paras.append(current)
    return paras


def _paragraph_units(lines: list[_Line], detect_headings: bool, min_chars: int = NOISE_CHARS) -> list[_Unit]:
    """Split one paragraph into tables, headings and prose."""
    units: list[_Unit] = []
    pos = 0
    for start, end, kinds in _table_runs(lines):
        units.extend(_text_units(lines[pos:start], detect_headings, min_chars))
        units.append(_Unit("table", lines[start:end], _table_text([l.text for l in lines[start:end]], kinds)))
        pos = end
    units.extend(_text_units(lines[pos:], detect_headings, min_chars))
    return units


def _text_units(lines: list[_Line], detect_headings: bool, min_chars: int = NOISE_CHARS) -> list[_Unit]:
    if not lines:
        return []
    units: list[_Unit] = []
    if detect_headings:
        first = lines[0].text.strip()
        kind = _heading_kind(first)
        if kind and len(lines) > 1:
            # Inside a multi-line paragraph only a first line that stands out
            # counts: clearly shorter than the text it introduces (a wrapped
            # line of prose fills the width) and not the start of a list.
            second = lines[1].text.strip()
            ratio = 0.7 if kind[0] == "title" else 0.9  # numbers and capitals are stronger cues
            if len(first) >= ratio * len(second) or (kind[0] == "numbered" and _NUMBERED.match(second)):
                kind = None
        if kind:
            units.append(_Unit("heading", lines[:1], first, level=kind[1], heading_source=kind[0]))
            lines = lines[1:]
    lines = _dehyphenate(lines)
    if lines:
        text = "\n".join(l.text.strip() for l in lines)
        if len(text.strip()) >= min_chars:
            units.append(_Unit("para", lines, text))
    return units


# ---------------------------------------------------------------------------
# Prose packing with overlap
# ---------------------------------------------------------------------------


@dataclass
class _Piece:
    text: str
    span: _Span
    continues: bool = False  # continues the previous piece's paragraph


def _para_pieces(unit: _Unit, target: int) -> list[_Piece]:
    """A paragraph as one piece, or as sentence pieces when it exceeds target (the
    one sentence splitter of loader, answer checks, graph and SQL: scirag_helpers.text)."""
    if count_tokens(unit.text) <= target and len(unit.text) <= target * MAX_CHARS_PER_TOKEN:
        return [_Piece(unit.text, unit.span)]
    # Character offset (start and end) of each line inside unit.text, to map sentences
    # to lines by bisection (both are sorted; a scan per sentence was quadratic).
    offsets, ends, pos = [], [], 0
    for line in unit.lines:
        offsets.append(pos)
        pos += len(line.text.strip())
        ends.append(pos)
        pos += 1
    pieces: list[_Piece] = []
    for a, b in text_rules.sentence_spans(unit.text):
        sentence = unit.text[a:b].strip()
        if not sentence:
            continue
        lines = unit.lines[bisect.bisect_left(ends, a) : bisect.bisect_left(offsets, b)]
        span = _span_of(l.span for l in lines) if lines else unit.span
        for part in _hard_split(sentence, target):
            pieces.append(_Piece(part, span, continues=bool(pieces)))
    return pieces


def _hard_split(text: str, target: int) -> list[str]:
    """A sentence longer than target (tables of numbers in prose, run-on
    extraction) is cut on whitespace so no chunk grows without bound; a "word"
    longer than target * MAX_CHARS_PER_TOKEN characters (a line without spaces)
    is cut by characters."""
    max_chars = target * MAX_CHARS_PER_TOKEN
    if count_tokens(text) <= target and len(text) <= max_chars:
        return [text]
    parts, current, size, chars = [], [], 0, 0
    for long_word in text.split():
        for i in range(0, len(long_word), max_chars):
            word = long_word[i : i + max_chars]
            n = count_tokens(word)
            if current and (size + n > target or chars + len(word) > max_chars):
                parts.append(" ".join(current))
                current, size, chars = [], 0, 0
            current.append(word)
            size += n
            chars += len(word) + 1
    if current:
        parts.append(" ".join(current))
    return parts


def _join_pieces(pieces: list[_Piece]) -> str:
    out = ""
    for i, p in enumerate(pieces):
        if i:
            out += " " if p.continues else PARA_SEP
        out += p.text
    return out


def _tail_sentences(text: str, overlap: int) -> str:
    """Whole trailing sentences worth at most ~overlap tokens; when even the
    last sentence is longer, its last overlap tokens' worth of words."""
    if overlap <= 0:
        return ""
    # Sentence starts across all paragraphs; the carry is a literal suffix of
    # the text, so paragraph breaks inside it survive.
    starts = []
    for para in re.finditer(r"(?:(?!\n\n).)+", text, re.DOTALL):
        starts.extend(para.start() + a for a, _ in text_rules.sentence_spans(para.group(0)))
    cut = None
    for start in reversed(starts):
        if count_tokens(text[start:]) > overlap:
            break
        cut = start
    if cut is not None:
        return text[cut:].strip()
    words, size = [], 0
    for word in reversed(text.split()):
        size += count_tokens(word)
        if size > overlap:
            break
        words.insert(0, word)
    return " ".join(words)


def _split_table(text: str, target: int) -> list[str]:
    """A complete table too long for one chunk, cut between rows; every part
    repeats the caption and header lines so each reads on its own."""
    lines = [l for l in text.split("\n") if l.strip()]
    if count_tokens(text) <= target or len(lines) <= TABLE_HEAD_LINES + 1:
        return [text]
    head, rows = lines[:TABLE_HEAD_LINES], lines[TABLE_HEAD_LINES:]
    budget = max(1, target - count_tokens("\n".join(head)))
    parts, current, size = [], [], 0
    for row in rows:
        n = count_tokens(row)
        if current and size + n > budget:
            parts.append("\n".join(head + current))
            current, size = [], 0
        current.append(row)
        size += n
    if current:
        parts.append("\n".join(head + current))
    return parts


def _table_tail(table_text: str) -> str:
    rows = [r for r in table_text.split("\n") if r.strip()]
    return "\n".join(rows[-TABLE_CARRY_ROWS:])


# ---------------------------------------------------------------------------
# The chunker
# ---------------------------------------------------------------------------


@dataclass
class _Section:
    ordinal: int
    level: int
    heading: str
    source: str
    path: str
    parts: list[str] = field(default_factory=list)
    span: _Span = field(default_factory=_Span)


class _Builder:
    """Walks units once, emitting section and content chunks in order."""

    def __init__(self, title: str, target: int, overlap: int, complete_tables: bool = False):
        self.complete_tables = complete_tables
        self.reference = False  # the buffered paragraphs are bibliography entries
        self.title = (title or "").strip()
        self.target = max(1, target)
        # Overlap must leave room for new text, or chunks would only repeat.
        self.overlap = max(0, min(overlap, self.target // 2))
        self.chunks: list[Chunk] = []
        self.stack: list[_Section] = []
        self.sections: list[_Section] = []
        self.buffer: list[_Unit] = []  # paragraphs waiting to be packed
        self.carry: str = ""  # overlap for the next prose chunk
        self.carry_is_prose = False  # False: table rows, which stay a block of their own
        self.table_open = False  # the last unit was a table without a caption

    # -- structure ------------------------------------------------------------
    @property
    def path(self) -> str:
        return " > ".join(s.heading for s in self.stack)

    def _content_level(self) -> int:
        return self.stack[-1].level + 1 if self.stack else 1

    def _parent(self) -> int | None:
        return self.stack[-1].ordinal if self.stack else None

    def _heading_level(self, unit: _Unit) -> int:
        if unit.heading_source in ("parser", "numbered"):
            return unit.level or 1
        if unit.heading_source == "caps":
            return 1
        # Title Case: a sibling of a Title Case heading just before it,
        # otherwise a sub-heading of whatever section is open.
        if self.stack and self.stack[-1].source == "title":
            return self.stack[-1].level
        return min(6, self.stack[-1].level + 1) if self.stack else 1

    def _record(self, text: str, span: _Span):
        """Add text to every open section: a section holds its sub-sections."""
        for section in self.stack:
            section.parts.append(text)
            section.span = section.span.merge(span)

    # -- events -----------------------------------------------------------------
    def heading(self, unit: _Unit):
        self.table_open = False
        self.flush_prose()
        self.carry = ""  # never carry overlap across a heading
        level = self._heading_level(unit)
        while self.stack and self.stack[-1].level >= level:
            self.stack.pop()
        self._record(unit.text, unit.span)
        parent = self._parent()
        section = _Section(
            len(self.chunks),
            level,
            unit.text,
            unit.heading_source or "parser",
            " > ".join([s.heading for s in self.stack] + [unit.text]),
            parts=[unit.text],
            span=unit.span,
        )
        # Placeholder; the body is known only when the section closes.
        self.chunks.append(
            Chunk(
                section.ordinal,
                "section",
                level,
                parent,
                section.path,
                unit.text,
                False,
                "",
                "",
                0,
                None,
                None,
                None,
                None,
            )
        )
        self.stack.append(section)
        self.sections.append(section)

    def table(self, unit: _Unit):
        if self.complete_tables:
            self.flush_prose()
            self.carry = ""  # table rows never leak into prose
            self._record(unit.text, unit.span)
            for part in _split_table(unit.text, int(TABLE_TARGET_FACTOR * self.target)):
                self._emit("table", part, unit.span)
            return
        # The caption travels inside the table chunk: a claim about a table names
        # what the caption says as often as what the cells say.
        caption = self.buffer.pop() if self.buffer and _TABLE_CAPTION.match(self.buffer[-1].text) else None
        self.flush_prose()
        self._record(unit.text, unit.span)
        if caption is None:
            self._emit("table", unit.text, unit.span)
        else:
            self._emit("table", caption.text + PARA_SEP + unit.text, caption.span.merge(unit.span))
        self.carry = _table_tail(unit.text)
        self.carry_is_prose = False
        self.table_open = caption is None  # a caption may still follow the table

    def paragraph(self, unit: _Unit):
        if unit.reference != self.reference:
            self.flush_prose()
            self.carry = ""
            self.reference = unit.reference
        self._record(unit.text, unit.span)
        if self.table_open and not self.buffer and _TABLE_CAPTION.match(unit.text):
            self._attach_caption(unit)
        else:
            self.buffer.append(unit)
        self.table_open = False

    def _attach_caption(self, unit: _Unit):
        table = self.chunks[-1]
        span = _Span(table.line_start, table.line_end, table.page_start, table.page_end).merge(unit.span)
        table.body = table.body + PARA_SEP + unit.text
        table.content = self._content(table.section_path, table.body)
        table.token_count = count_tokens(table.content)
        table.line_start, table.line_end, table.page_start, table.page_end = (
            span.line_start,
            span.line_end,
            span.page_start,
            span.page_end,
        )

    # -- prose packing ----------------------------------------------------------
    def flush_prose(self):
        pieces: list[_Piece] = []
        for unit in self.buffer:
            pieces.extend(_para_pieces(unit, self.target))
        self.buffer = []
        current: list[_Piece] = []
        size, chars = count_tokens(self.carry), len(self.carry)
        max_chars = self.target * MAX_CHARS_PER_TOKEN
        for piece in pieces:
            n = count_tokens(piece.text)
            if current and (size + n > self.target or chars + len(piece.text) > max_chars):
                self._emit_prose(current)
                current, size, chars = [], count_tokens(self.carry), len(self.carry)
            current.append(piece)
            size += n
            chars += len(piece.text) + 2
        if current:
            self._emit_prose(current)

    def _emit_prose(self, pieces: list[_Piece]):
        new_text = _join_pieces(pieces)
        body = new_text
        if self.carry:
            # Sentences of one paragraph split over two chunks rejoin with a space.
            joiner = " " if pieces[0].continues and self.carry_is_prose else PARA_SEP
            body = self.carry + joiner + new_text
        # The span covers the chunk's own source lines; the overlap is repeated
        # context whose source is the previous chunk.
        self._emit("prose", body, _span_of(p.span for p in pieces))
        self.carry = _tail_sentences(new_text, self.overlap)
        self.carry_is_prose = True

    def _emit(self, kind: str, body: str, span: _Span):
        content = self._content(self.path, body)
        self.chunks.append(
            Chunk(
                len(self.chunks),
                kind,
                self._content_level(),
                self._parent(),
                self.path,
                None,
                kind == "table",
                body,
                content,
                count_tokens(content),
                span.line_start,
                span.line_end,
                span.page_start,
                span.page_end,
                is_reference=kind == "prose" and self.reference,
            )
        )

    def _content(self, path: str, body: str) -> str:
        # The prefix is built in one place (text_rules.chunk_head); chunks.body keeps
        # the body so nothing ever strips it again.
        return text_rules.chunk_content(self.title, path, body)

    # -- finish -------------------------------------------------------------------
    def finish(self) -> list[Chunk]:
        self.flush_prose()
        for section in self.sections:
            body = PARA_SEP.join(section.parts)  # parts[0] is the heading line
            chunk = self.chunks[section.ordinal]
            chunk.body = body
            chunk.content = self._content(section.path, body)
            chunk.token_count = count_tokens(chunk.content)
            s = section.span
            chunk.line_start, chunk.line_end, chunk.page_start, chunk.page_end = (
                s.line_start,
                s.line_end,
                s.page_start,
                s.page_end,
            )
        return self.chunks


def chunk_document(doc: ParsedDocument, title: str, target_tokens: int = 800, overlap_tokens: int = 150) -> list[Chunk]:
    """Chunk a parsed document; returns [] when it has no usable text."""
    detect_headings = doc.parser not in _STRUCTURED_PARSERS
    complete = doc.parser in _COMPLETE_TABLE_PARSERS
    units: list[_Unit] = []
    for block in doc.blocks:
        units.extend(_block_units(block, detect_headings, 1 if complete else NOISE_CHARS))
    if not units:
        return []
    builder = _Builder(title, target_tokens, overlap_tokens, complete_tables=complete)
    for unit in units:
        if unit.kind == "heading":
            builder.heading(unit)
        elif unit.kind == "table":
            builder.table(unit)
        else:
            builder.paragraph(unit)
    return builder.finish()


def content_hash(chunks: list[Chunk]) -> str:
    """SHA-256 over the chunked text, independent of file name and title, so
    the same content ingested twice is recognised as a duplicate."""
    bodies = [c.body for c in chunks if c.kind != "section"]
    if not bodies:  # a document of headings only
        bodies = [c.body for c in chunks]
    return hashlib.sha256("\n\x1e\n".join(bodies).encode("utf-8")).hexdigest()
