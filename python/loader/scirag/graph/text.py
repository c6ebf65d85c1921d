"""Text helpers shared by the extractors: splitting a chunk into header lines,
sentences and table rows, and finding surface forms in it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scirag_helpers import text as text_rules

NUMERIC_CELL = re.compile(r"^[\s$€£~<>±+\-–]*[\d.,]+\s*(?:%|[a-zA-Z/]{0,6})?\s*$")
DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>;,)\]]+)", re.IGNORECASE)
WORD = r"A-Za-z0-9"


@dataclass
class Unit:
    """One place a relationship can be stated: a sentence, a header line or a table row."""

    kind: str  # header | sentence | row
    start: int  # offset in the chunk text
    text: str
    paragraph: int = 0
    header_row: "Unit | None" = None
    cells: list[tuple[int, int]] = field(default_factory=list)  # (start, end) offsets of row cells


def is_table_row(line: str) -> bool:
    return line.count(" | ") >= 1 or line.count("\t") >= 1


def split_cells(line: str) -> list[tuple[int, int]]:
    sep = re.compile(r"\t| \| ")
    cells, pos = [], 0
    for m in sep.finditer(line):
        cells.append((pos, m.start()))
        pos = m.end()
    cells.append((pos, len(line)))
    return cells


def is_header_row(line: str) -> bool:
    cells = [line[a:b].strip() for a, b in split_cells(line)]
    return not any(NUMERIC_CELL.match(c) for c in cells if c)


def split_units(text: str, body: str | None = None) -> list[Unit]:
    """Header lines (title, section path), then the body's sentences and table rows.

    text is a chunk's content; body its stored body (chunks.body), whose head (the
    title and section-path lines the loader put before it: text_rules.chunk_head_of)
    gives one header unit per line. Without body the whole text is body."""
    units: list[Unit] = []
    body_start = 0
    if body is not None:
        pos = 0
        for line in text_rules.chunk_head_of(text, body).split("\n"):
            if line.strip():
                units.append(Unit("header", pos, line))
            pos += len(line) + 1
        body_start = len(text) - len(body)
    para_no = 0
    for m in re.finditer(r"(?:[^\n]|\n(?!\s*\n))+", text[body_start:]):
        para = m.group(0)
        p0 = body_start + m.start()
        para_no += 1
        lines = para.split("\n")
        if sum(is_table_row(x) for x in lines) >= max(1, len(lines) // 2):
            header = None
            pos = p0
            for line in lines:
                if is_table_row(line):
                    u = Unit("row", pos, line, para_no, cells=split_cells(line))
                    if header is None and is_header_row(line):
                        header = u
                        u.kind = "header_row"
                    else:
                        u.header_row = header
                    units.append(u)
                elif line.strip():
                    units.append(Unit("sentence", pos, line, para_no))
                pos += len(line) + 1
            continue
        # prose: sentences by the one splitter (scirag_helpers.text), keeping offsets
        for a, b in text_rules.sentence_spans(para):
            if para[a:b].strip():
                units.append(Unit("sentence", p0 + a, para[a:b], para_no))
    return units


def surface_pattern(surface: str) -> str:
    """Regex for a surface form: flexible whitespace/hyphens, optional plural, word boundaries."""
    words = [w for w in re.split(r"[\s\-]+", surface.strip()) if w]
    body = r"[\s\-]+".join(re.escape(w) for w in words)
    if surface and surface[-1].isalpha():
        body += r"(?:e?s)?"
    return rf"(?<![{WORD}]){body}(?![{WORD}])"


def is_acronym(surface: str) -> bool:
    return any(c.isupper() for c in surface) and not any(c.islower() for c in surface)


@dataclass
class Match:
    start: int
    end: int
    surface: str
    key: object  # what the lexicon maps the surface to


class Lexicon:
    """Finds known surface forms in text, longest first and without overlaps.
    All-capital surfaces (acronyms) match case-sensitively, the rest ignore case."""

    def __init__(self, entries: dict[str, object]):
        self.entries = dict(entries)
        self._ci: list[tuple[re.Pattern, object]] = []
        self._cs: list[tuple[re.Pattern, object]] = []
        ci, cs = [], []
        for surface, key in sorted(self.entries.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            if not surface.strip():
                continue
            pat = surface_pattern(surface)
            (cs if is_acronym(surface) else ci).append((pat, key))
        self._ci_all = re.compile("|".join(p for p, _ in ci), re.IGNORECASE) if ci else None
        self._cs_all = re.compile("|".join(p for p, _ in cs)) if cs else None
        self._ci = [(re.compile(p, re.IGNORECASE), k) for p, k in ci]
        self._cs = [(re.compile(p), k) for p, k in cs]

    def find(self, text: str) -> list[Match]:
        found: list[Match] = []
        for combined, singles in ((self._ci_all, self._ci), (self._cs_all, self._cs)):
            if combined is None:
                continue
            for m in combined.finditer(text):
                for pat, key in singles:
                    if pat.fullmatch(m.group(0)):
                        found.append(Match(m.start(), m.end(), m.group(0), key))
                        break
        return resolve_overlaps(found)


def resolve_overlaps(matches: list[Match]) -> list[Match]:
    """Keeps the longest of overlapping matches (earliest on ties)."""
    out: list[Match] = []
    for m in sorted(matches, key=lambda m: (-(m.end - m.start), m.start)):
        if all(m.end <= o.start or m.start >= o.end for o in out):
            out.append(m)
    return sorted(out, key=lambda m: m.start)


def normalize_ws(s: str) -> str:
    return " ".join(s.split()).lower()


def occurs_in(needle: str, haystack: str) -> bool:
    """True when needle occurs in haystack, ignoring case and runs of whitespace."""
    n = normalize_ws(needle)
    return bool(n) and n in normalize_ws(haystack)


def find_dois(text: str) -> list[str]:
    out = []
    for m in DOI.finditer(text):
        doi = m.group(1).rstrip(".").lower()
        if doi not in out:
            out.append(doi)
    return out
