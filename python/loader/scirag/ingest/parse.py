"""Parse source files into one block model: headings, tables and prose.

Every format (PDF, Markdown, HTML, plain text) ends up as a list of Block
objects so that the chunker never needs to know where a document came from.
Parsers only recover the structure the format states explicitly (Markdown
'#', HTML <h2>, PDF table rulings); heuristics for headings and tables hidden
in plain prose live in the chunker, which sees all formats alike.  The PDF
'layout' engine (pdf/layout.py) is the exception: it reads fonts and captions,
so it marks headings and complete tables itself, and the chunker trusts it.

Line numbers are 1-based.  For text, Markdown and HTML they point into the
source file.  For PDFs they point into the document's extracted text, defined
as all blocks' text joined with one blank line between blocks ("\\n\\n".join).
"""

from __future__ import annotations

import html
import logging
import re
from html.parser import HTMLParser
from pathlib import Path

from .blocks import CELL_SEP, Block, ParsedDocument, ParseError
from .pdf.engines import parse_pdf

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------

_TEXT_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
}


def parse_file(path: str | Path, pdf_engine: str | None = None) -> ParsedDocument:
    """Parse a file, choosing the parser from its suffix (and for PDFs the
    engine: pdf_engine, else $SCIRAG_PDF_ENGINE, else 'layout')."""
    path = Path(path)
    if not path.exists():
        raise ParseError(f"{path}: file not found")
    if not path.is_file():
        raise ParseError(f"{path}: not a regular file")
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return parse_pdf(path, pdf_engine)

    data = _read_bytes(path)
    fmt = _TEXT_FORMATS.get(suffix)
    if fmt is None:
        # Unknown suffix: accept it only if it is plainly text, so binary
        # files (images, archives, office documents) fail loudly instead of
        # becoming garbage chunks.
        if b"\x00" in data[:8192]:
            raise ParseError(f"{path}: unsupported file type {suffix or '(no suffix)'!r} (binary content)")
        fmt = "text"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{path}: unsupported file type {suffix or '(no suffix)'!r}: not UTF-8 text "
            f"(invalid byte at offset {exc.start})"
        ) from None
    doc = parse_text(text, fmt=fmt, name=str(path))
    nul = data.count(b"\x00")
    if nul:
        # removed (they cannot reach the database), and said so in the report row (issue 26)
        first = data.index(b"\x00")
        doc.partial = f"{nul} NUL byte(s) removed (the first at offset {first})"
    return doc


def parse_text(text: str, fmt: str = "text", name: str = "<inline>") -> ParsedDocument:
    """Parse in-memory text; fmt is 'text', 'markdown' or 'html'."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt == "markdown":
        return _parse_markdown(text)
    if fmt == "html":
        return _parse_html(text)
    if fmt == "text":
        return ParsedDocument(blocks=_paragraph_blocks(text.split("\n"), first_line=1), parser="text")
    raise ParseError(f"{name}: unknown format {fmt!r} (expected text, markdown or html)")


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ParseError(f"{path}: cannot read file ({exc.strerror or exc})") from None


# ---------------------------------------------------------------------------
# Plain text
# ---------------------------------------------------------------------------


def _paragraph_blocks(lines: list[str], first_line: int) -> list[Block]:
    """Blank-line separated paragraphs as prose blocks with their line spans."""
    blocks: list[Block] = []
    start = None
    for i, line in enumerate(lines + [""]):
        if line.strip():
            if start is None:
                start = i
        elif start is not None:
            blocks.append(
                Block("prose", "\n".join(lines[start:i]), line_start=first_line + start, line_end=first_line + i - 1)
            )
            start = None
    return blocks


# ---------------------------------------------------------------------------
# Markdown (standard library only)
# ---------------------------------------------------------------------------

_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_MD_HRULE = re.compile(r"^ {0,3}([-*_])( *\1){2,} *$")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+) *$")


def _md_inline(text: str) -> str:
    """Strip the inline markup that would only add noise to search text."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)  # images -> alt text
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # links -> link text
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)  # bold
    text = re.sub(r"`([^`]+)`", r"\1", text)  # inline code
    return text


def _md_split_row(line: str) -> list[str]:
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    cells = re.split(r"(?<!\\)\|", row)
    return [_md_inline(c.strip().replace("\\|", "|")) for c in cells]


def _is_md_table_start(lines: list[str], i: int) -> bool:
    """A GFM table: a row with pipes followed by a ---|--- separator line."""
    return "|" in lines[i] and i + 1 < len(lines) and "-" in lines[i + 1] and bool(_MD_TABLE_SEP.match(lines[i + 1]))


def _parse_markdown(text: str) -> ParsedDocument:
    lines = text.split("\n")
    blocks: list[Block] = []
    title = None
    para: list[tuple[int, str]] = []  # (0-based line index, text)

    def flush_para():
        if para:
            blocks.append(
                Block(
                    "prose",
                    "\n".join(_md_inline(t) for _, t in para),
                    line_start=para[0][0] + 1,
                    line_end=para[-1][0] + 1,
                )
            )
            para.clear()

    i = _skip_front_matter(lines)
    while i < len(lines):
        line = lines[i]
        fence = _MD_FENCE.match(line)
        heading = _MD_HEADING.match(line)
        if fence:
            # Fenced code is kept verbatim as prose (the chunker may still
            # recognise an aligned grid inside it as a table).
            flush_para()
            marker = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(marker):
                j += 1
            if j > i + 1:
                blocks.append(Block("prose", "\n".join(lines[i + 1 : j]), line_start=i + 2, line_end=j))
            i = j + 1
        elif heading:
            flush_para()
            heading_text = _md_inline((heading.group(2) or "").strip())
            if heading_text:
                level = len(heading.group(1))
                blocks.append(Block("heading", heading_text, level=level, line_start=i + 1, line_end=i + 1))
                if level == 1 and title is None:
                    title = heading_text
            i += 1
        elif _is_md_table_start(lines, i):
            flush_para()
            rows = [_md_split_row(lines[i])]
            j = i + 2  # skip the separator line
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                rows.append(_md_split_row(lines[j]))
                j += 1
            blocks.append(Block("table", "\n".join(CELL_SEP.join(r) for r in rows), line_start=i + 1, line_end=j))
            i = j
        elif not line.strip():
            flush_para()
            i += 1
        elif para and len(para) == 1 and _MD_SETEXT.match(line) and not _MD_HRULE.match(para[0][1]):
            # Setext heading: a single text line underlined with === or ---.
            level = 1 if line.strip().startswith("=") else 2
            heading_text = _md_inline(para[0][1].strip())
            blocks.append(Block("heading", heading_text, level=level, line_start=para[0][0] + 1, line_end=i + 1))
            if level == 1 and title is None:
                title = heading_text
            para.clear()
            i += 1
        elif _MD_HRULE.match(line):
            flush_para()
            i += 1
        else:
            para.append((i, line))
            i += 1
    flush_para()
    return ParsedDocument(blocks=blocks, parser="markdown", title=title)


def _skip_front_matter(lines: list[str]) -> int:
    """Index of the first line after a leading YAML front-matter block, if any."""
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                return j + 1
    return 0


# ---------------------------------------------------------------------------
# HTML (standard library html.parser)
# ---------------------------------------------------------------------------

_HTML_SKIP = {"script", "style", "noscript", "template", "svg"}
_HTML_BLOCK = {
    "p",
    "li",
    "div",
    "blockquote",
    "pre",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "nav",
    "dd",
    "dt",
    "figcaption",
    "figure",
    "ul",
    "ol",
    "dl",
    "form",
    "address",
    "body",
    "hr",
}
_HTML_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HTML_VOID = {
    "br",
    "hr",
    "img",
    "input",
    "meta",
    "link",
    "area",
    "base",
    "col",
    "embed",
    "source",
    "track",
    "wbr",
    "param",
}


class _HtmlBlocks(HTMLParser):
    """Collects heading, table and prose blocks while the parser streams tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.title: str | None = None
        self._skip = 0  # depth inside script/style/...
        self._in_title = False
        self._title_parts: list[str] = []
        self._pre = 0
        self._text: list[str] = []  # current prose or heading text
        self._span: list[int] = []  # source lines touched by _text
        self._heading: int | None = None
        self._tables: list[dict] = []  # stack, for nested tables

    # -- helpers ------------------------------------------------------------
    def _line(self) -> int:
        return self.getpos()[0]

    def _flush_text(self):
        text = "".join(self._text)
        text = text if self._pre else re.sub(r"[ \t\r\f\v]+", " ", text)
        text = "\n".join(l.strip() for l in text.split("\n"))
        text = re.sub(r"\n{2,}", "\n", text).strip()
        if text:
            kind = "heading" if self._heading else "prose"
            self.blocks.append(
                Block(kind, text, level=self._heading, line_start=min(self._span), line_end=max(self._span))
            )
        self._text, self._span = [], []

    # -- parser callbacks ---------------------------------------------------
    def handle_starttag(self, tag, attrs):
        if tag in _HTML_SKIP:
            self._skip += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if self._skip:
            return
        table = self._tables[-1] if self._tables else None
        if tag == "table":
            if table is None:
                self._flush_text()
            self._tables.append(
                {"rows": [], "row": None, "cell": None, "caption": [], "in_caption": False, "start": self._line()}
            )
        elif table is not None and len(self._tables) == 1 and tag == "tr":
            table["row"] = []
            table["rows"].append(table["row"])
        elif table is not None and len(self._tables) == 1 and tag in ("td", "th"):
            if table["row"] is None:
                table["row"] = []
                table["rows"].append(table["row"])
            table["cell"] = []
            table["row"].append(table["cell"])
        elif table is not None and tag == "caption":
            table["in_caption"] = True
        elif tag in _HTML_HEADINGS and table is None:
            self._flush_text()
            self._heading = _HTML_HEADINGS[tag]
        elif tag == "br":
            if table is not None and table["cell"] is not None:
                table["cell"].append(" ")
            elif self._text:
                self._text.append("\n")  # a line break, not a new source line
        elif tag in _HTML_BLOCK and table is None:
            self._flush_text()
            if tag == "pre":
                self._pre += 1

    def handle_endtag(self, tag):
        if tag in _HTML_SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if tag == "title":
            self._in_title = False
            self.title = re.sub(r"\s+", " ", "".join(self._title_parts)).strip() or None
            return
        if self._skip:
            return
        table = self._tables[-1] if self._tables else None
        if tag == "table" and table is not None:
            self._tables.pop()
            if not self._tables:
                self._emit_table(table)
        elif table is not None and tag in ("td", "th"):
            table["cell"] = None
        elif table is not None and tag == "caption":
            table["in_caption"] = False
        elif tag in _HTML_HEADINGS and self._heading:
            self._flush_text()
            self._heading = None
        elif tag in _HTML_BLOCK and table is None:
            self._flush_text()
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _HTML_VOID:
            self.handle_endtag(tag)

    def handle_data(self, data):
        if self._in_title:
            self._title_parts.append(data)
            return
        if self._skip:
            return
        self._add_text(data)

    def _add_text(self, data: str):
        table = self._tables[-1] if self._tables else None
        if table is not None:
            if table["in_caption"]:
                table["caption"].append(data)
            elif table["cell"] is not None:
                table["cell"].append(data)
            return
        if not data.strip() and not self._text:
            return
        start = self._line()
        self._text.append(data)
        self._span.extend((start, start + data.count("\n")))

    def _emit_table(self, table: dict):
        rows = []
        for row in table["rows"]:
            cells = [re.sub(r"\s+", " ", "".join(c)).strip() for c in row]
            if any(cells):
                rows.append(CELL_SEP.join(cells))
        end = self._line()
        caption = re.sub(r"\s+", " ", "".join(table["caption"])).strip()
        if caption:
            # The caption says what the numbers mean; keep it next to the table.
            self.blocks.append(Block("prose", caption, line_start=table["start"], line_end=table["start"]))
        if rows:
            self.blocks.append(Block("table", "\n".join(rows), line_start=table["start"], line_end=end))

    def close(self):
        super().close()
        self._flush_text()


def _parse_html(text: str) -> ParsedDocument:
    parser = _HtmlBlocks()
    parser.feed(text)
    parser.close()
    title = parser.title
    if title is None:
        title = next((b.text for b in parser.blocks if b.kind == "heading" and b.level == 1), None)
    return ParsedDocument(blocks=parser.blocks, parser="html", title=title and html.unescape(title))
