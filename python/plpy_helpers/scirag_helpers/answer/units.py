"""Evidence units: the sentences of prose and the rows of tables, and how much of the question they cover."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from scirag_helpers import checks, prompts
from scirag_helpers import text as text_rules
from scirag_helpers.words import counts_in_words, terms


_QUANT = re.compile(
    r"(\$\s?\d|\d\s?(%|°|‰)|\d\s?(?:[a-zA-Z]{1,5}(?:/[a-zA-Z0-9]+)*|m3|m³)\b|\(\s*[^)]*/[^)]*\)\s*:\s*[\d.,]+)"
)
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_ROW = re.compile(r"\s\|\s")
_LABEL = re.compile(r"^\s*(?:Table|Figure|Fig\.)\s+[A-Z]?\d+[a-z]?\s*[:.]\s*")


@dataclass
class Unit:
    n: int  # source number
    order: int  # position in the source
    text: str  # quoted text (a sentence, or a rendered table row)
    terms: set = field(default_factory=set)
    ctx: set = field(default_factory=set)  # terms of the title and section path (count half)
    table_ctx: set = field(default_factory=set)  # a table row's caption and header terms (count half too)
    is_row: bool = False
    cells: list = field(default_factory=list)  # (header, value) for table rows
    has_number: bool = False
    has_quantity: bool = False
    is_caption: bool = False  # a table or figure caption: describes, rarely answers


def table_rows(lines: list[str]) -> list[list[tuple[str, str]]]:
    """Rows of a pipe table as (column name, cell) pairs, the label first: the same
    reading of the table (checks.parse_table) as the table-cell answerer and the
    supports check use."""
    return rows_of(checks.parse_table("\n".join(lines)))


def rows_of(t: dict | None) -> list[list[tuple[str, str]]]:
    """table_rows of a table already read."""
    if t is None:
        return []
    label_name = t["columns"][0] if t["columns"] else ""
    return [
        [(label_name, " ".join(x for x in (r["group"], r["label"]) if x))] + checks.row_columns(t, r) for r in t["rows"]
    ]


# a list item's mark: a bullet, a Markdown "-" or "*", or a number ("1." / "2)")
_ITEM_START = re.compile(rf"\s*([-*{text_rules.BULLETS}]|\d{{1,2}}[.)])\s+\S")
_ITEM_MARK = re.compile(rf"^\s*[-*{text_rules.BULLETS}]\s+")


def units_of(source: dict) -> list[Unit]:
    text = source["text"]
    ctx = set(terms(prompts.breadcrumb(source.get("title") or "", source.get("section_path"))))
    out: list[Unit] = []
    order = 0
    for block in re.split(r"\n\s*\n", text):
        lines = [x for x in block.split("\n") if x.strip()]
        if not lines:
            continue
        if sum(1 for x in lines if _ROW.search(x)) >= max(1, len(lines) // 2):
            # The block's lines without cells are the table's caption. A row reads in its
            # light, as a sentence reads under its section's title: the caption names what
            # the table measures, and questions use its words ("Enwik8 results"). It is
            # not quoted on its own: it describes the table, the rows answer.
            caption = [x for x in lines if not _ROW.search(x)]
            table = checks.parse_table("\n".join(lines))
            around = " ".join([*caption, *(table["header_lines"] if table else [])])
            table_ctx = set(terms(around, True))
            for cells in rows_of(table):
                rendered = "; ".join(f"{h}: {v}" if h else v for h, v in cells if v)
                u = Unit(source["n"], order, rendered, set(terms(rendered, True)), is_row=True, cells=cells)
                u.table_ctx = table_ctx
                out.append(u)
                order += 1
            continue
        paragraphs, cur = [], []
        # list items are sentences of their own, also when the loader ran them into one line
        lines = [y for x in lines for y in text_rules.LIST_ITEM.split(x)]
        for x in lines:
            if _ITEM_START.match(x) and cur:
                paragraphs.append(" ".join(cur))
                cur = []
            cur.append(_ITEM_MARK.sub("", x))
        if cur:
            paragraphs.append(" ".join(cur))
        for sent in (s for p in paragraphs for s in checks.split_sentences(p)):
            words = re.findall(r"[A-Za-z]{2,}", sent)
            if len(words) < 4 or len(sent) < 25 or sent.isupper():
                continue  # headings, captions' stubs, extraction noise
            out.append(Unit(source["n"], order, sent, set(terms(sent, True))))
            order += 1
    for u in out:
        body = _LABEL.sub("", u.text)  # "Table 5:" is a name, not a figure
        u.ctx = (ctx | u.table_ctx) - u.terms
        u.is_caption = body != u.text
        u.has_number = bool(_NUM.search(body)) or bool(counts_in_words(body))
        # a table cell is a measurement: its unit sits in the column header
        u.has_quantity = bool(_QUANT.search(body)) or (u.is_row and u.has_number)
    return out


@dataclass
class Extract:
    text: str
    abstained: bool
    units: list
    coverage: float
    missing: list
    reason: str
    short: str | None = None  # a table cell named by row and column: its value


_REFS = re.compile(r"\s?\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]")


def strip_refs(sentence: str) -> str:
    """A quoted sentence without the paper's own reference markers ("previous work
    [1]"): in an answer they would read as citations of the numbered sources."""
    return _REFS.sub("", sentence)


def _weights(qterms: list[str], units: list[Unit]) -> dict[str, float]:
    n = max(len(units), 1)
    w = {}
    for t in dict.fromkeys(qterms):
        df = sum(1 for u in units if t in u.terms or t in u.ctx)
        w[t] = math.log(1 + (n + 1) / (df + 0.5))
    return w


def _coverage(covered: set, w: dict, ctx: set = frozenset()) -> float:
    """IDF-weighted share of the question's terms in a unit (its title and section
    path count half)."""
    total = sum(w.values())
    if not total:
        return 0.0
    return sum(v if t in covered else (0.5 * v if t in ctx else 0.0) for t, v in w.items()) / total


def _row_text(u: Unit, keep_terms: set) -> str:
    """A table row with its label and the columns the question asks about."""
    if not u.cells:
        return u.text
    label = u.cells[0]
    keep = [c for c in u.cells[1:] if set(terms(c[0])) & keep_terms]
    if not keep or len(keep) == len(u.cells) - 1:
        keep = u.cells[1:]
    parts = [f"{label[0]}: {label[1]}" if label[0] else label[1]] + [f"{h}: {v}" if h else v for h, v in keep]
    return "; ".join(p for p in parts if p)
