"""Text primitives shared by the loader and by PL/Python: sentences, the units a
chunk body is cut into, word counts, and the title/section prefix of a chunk.

One implementation for every caller: the chunker (python/loader/scirag/ingest/chunk.py)
packs and overlaps sentences, the answer checks (checks.py) and the extractive
answerer quote them, the graph extractor (scirag/graph/text.py) reads relations
from them, and scirag.text_units (sql/functions/deep_text.sql, PL/Python) hands
them to the sliding window of enrichment and consolidation.

Positions are 0-based character offsets, end exclusive (scirag.text_units adds 1
for SQL). Every regular expression here is linear in its input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A full stop after these (lower-cased, leading brackets and quotes dropped) ends
# no sentence: "et al.", "e.g.", "Fig. 2", "No. 5". Single letters (initials,
# "J. Smith") and decimals ("1.1": no whitespace after the stop) do not either.
ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "al",
        "fig",
        "figs",
        "eq",
        "eqs",
        "tab",
        "no",
        "nos",
        "vs",
        "cf",
        "approx",
        "ca",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "sec",
        "ref",
        "refs",
        "vol",
        "pp",
        "resp",
        "incl",
        "dept",
        "univ",
        "est",
        "min",
        "max",
        "avg",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "inc",
        "ltd",
        "co",
        "corp",
        "etc.,",
    }
)
# A sentence mark, closing quotes/brackets, whitespace; the next sentence starts
# with a capital, a digit, a quote or an opening bracket.
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+")
_OPENERS = "\"'“‘(["
_LAST_WORD = re.compile(r"(\S+)$")
_WORD = re.compile(r"\S*\w\S*")
_PARA_TRIM = " \t\r\n"

PARA_SEP = "\n\n"  # paragraphs of a chunk body are separated by a blank line
MAX_UNITS_CHARS = 2_000_000  # scirag.text_units refuses longer bodies (a caller's bound)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of one paragraph; end is after the closing mark
    and its quotes/brackets, the whitespace between sentences belongs to neither."""
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end()
        if end >= len(text):
            break
        following = text[end]
        if not (following.isupper() or following.isdigit() or following in _OPENERS):
            continue
        if text[m.start()] == ".":
            # the word before the stop; an abbreviation is short, so 64 characters of
            # look-back suffice (and keep the scan linear on a long paragraph)
            w = _LAST_WORD.search(text, max(start, m.start() - 64), m.start())
            word = w.group(1).lstrip("([\"'“").lower() if w else ""
            if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
        spans.append((start, m.start() + len(m.group(0).rstrip())))
        start = end
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of one paragraph, stripped."""
    return [text[a:b].strip() for a, b in sentence_spans(text) if text[a:b].strip()]


# A bulleted list item starts a sentence of its own, also when the PDF's text ran the
# items into one line ("... Primer-EZ. • Post-Softmax Spatial Gating: ...")
BULLETS = "•▪◦"  # the marks a PDF's list items start with (a line's "-" or "*" too, in Markdown)
LIST_ITEM = re.compile(rf"\s+(?=[{BULLETS}]\s)")
_BULLET = re.compile(rf"^[{BULLETS}]\s+")


def paragraph_sentences(text: str) -> list[str]:
    """The sentences of a text of several paragraphs (blank-line separated); a
    paragraph's inner line breaks and runs of spaces read as one space, and each
    bulleted item is read on its own (without its bullet)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text or ""):
        for item in LIST_ITEM.split(" ".join(para.split())):
            out.extend(sentences(_BULLET.sub("", item)))
    return out


def word_count(text: str) -> int:
    """Whitespace-separated tokens holding a letter or digit (scirag.word_count's rule:
    table rules "|", dashes and omission marks do not count)."""
    return len(_WORD.findall(text or ""))


def is_table_paragraph(para: str) -> bool:
    """Every line of the paragraph carries a cell separator '|'."""
    return all("|" in line for line in para.split("\n"))


@dataclass(frozen=True)
class Unit:
    """A unit of a chunk body: a heading paragraph, a table row or a prose sentence."""

    unit_no: int  # 1-based, in body order
    para_no: int  # 1-based paragraph number
    start: int  # 0-based offset in the body
    end: int  # exclusive
    words: int
    is_heading: bool


def units(body: str, headings=()) -> list[Unit]:
    """The units the sliding window keeps or drops: a paragraph listed in headings
    (or a markdown '#' line) is one heading unit, a table paragraph (every line has
    '|') gives one unit per non-blank row, prose gives its sentences."""
    if len(body or "") > MAX_UNITS_CHARS:
        raise ValueError(f"the body is {len(body)} characters long, at most {MAX_UNITS_CHARS} allowed")
    heads = set(headings or ())
    out: list[Unit] = []
    pos = 0
    pno = 0

    def add(pno: int, s: int, e: int, text: str, heading: bool):
        out.append(Unit(len(out) + 1, pno, s, e, word_count(text), heading))

    for raw in (body or "").split(PARA_SEP):
        pstart = pos
        pos += len(raw) + len(PARA_SEP)
        para = raw.strip(_PARA_TRIM)
        if not para:
            continue
        pno += 1
        p0 = pstart + len(raw) - len(raw.lstrip(_PARA_TRIM))
        if para in heads or re.match(r"#{1,6}\s", para):
            add(pno, p0, p0 + len(para), para, True)
        elif is_table_paragraph(para):
            lpos = p0
            for line in para.split("\n"):
                if line.strip():
                    add(pno, lpos + len(line) - len(line.lstrip()), lpos + len(line.rstrip()), line, False)
                lpos += len(line) + 1
        else:
            for a, b in sentence_spans(para):
                add(pno, p0 + a, p0 + b, para[a:b], False)
    return out


# ---------------------------------------------------------------------------------
# The chunk prefix: built here once, by the loader, and never stripped again
# (chunks.body stores the text without it).
# ---------------------------------------------------------------------------------


def chunk_head(title: str | None, section_path: str | None) -> str:
    """The "title\\nsection path" lines the loader puts before a chunk's body (as
    embedded and keyword-indexed); a path that opens with the title says it once."""
    title = (title or "").strip()
    path = section_path or ""
    if title and (path == title or path.startswith(title + " > ")):
        path = path[len(title) + 3 :]
    return "\n".join(p for p in (title, path) if p)


def chunk_content(title: str | None, section_path: str | None, body: str) -> str:
    """A chunk's stored content: its head, a blank line, its body."""
    head = chunk_head(title, section_path)
    return f"{head}{PARA_SEP}{body}" if head else body


def chunk_head_of(content: str, body: str) -> str:
    """The head of a stored chunk, exactly: its content without its stored body
    (chunks.body) and the blank line before it; '' for a chunk without a head. The
    inverse of chunk_content, so no reader guesses where the prefix ends."""
    if not content.endswith(body):
        raise ValueError("a chunk's content must end with its body (chunks.body)")
    return content[: len(content) - len(body)].rstrip("\n")
