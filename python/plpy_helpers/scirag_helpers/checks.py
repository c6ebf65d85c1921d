"""Mechanical answer checks that need no model (the same code for scirag.answer and
``scirag eval answer``):

* citations: every [n] names a source the answerer was given, and an answer that is
  not an abstention cites at least one (citing nothing is not a way to pass);
* numbers: every number in the answer appears in a source the answer cites;
* supports: every claim sentence of the answer is held by a source it cites, its
  key terms and numbers together in ONE sentence or table row of that source (not
  merely scattered over the chunk), so a figure lifted from one sentence and pinned
  to another's subject fails;
* abstention: an answer to an unanswerable question says the sources lack it.

The checks read the answer text and the sources exactly as the answerer saw them
(the prompt view); they never trust what an answerer says about itself.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from scirag_helpers import text as text_rules
from scirag_helpers.words import SUPPORT_STOP, normalize_number, support_terms

# [3]  [1, 4]  [2-3]  [1][2]  [S2]  -- the bracket forms models actually produce
_CITE = re.compile(r"\[\s*S?\d+(?:\s*(?:[,;]|-|–|and)\s*S?\d+)*\s*\]")
_CITE_NUM = re.compile(r"S?(\d+)(?:\s*(?:-|–)\s*S?(\d+))?")

# A number not glued to a word or to another number: "PM2.5", "CH4" and "m3" carry no
# claim of their own, while "120,300", "0.263" and "58 %" do.
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w])")

_ABSTAIN = re.compile(
    r"\b(the |these |available |provided )*sources? (do|does|did)(n'?t| not) (contain|include|provide|report|give|say|mention|cover|state|address)"
    r"|\bnot (contained|found|reported|given|covered|stated) in the (provided |available |given )?sources"
    r"|\b(no|none of the) (provided |available |given )?sources? (contain|include|provide|report|give|mention|cover)"
    r"|\bcannot be answered from the (provided |available |given )?sources"
    r"|\bthe sources are silent\b",
    re.I,
)

_LEADING_CITES = re.compile(r"^((?:\s*\[[^\]]*\])+)\s*")


def citation_numbers(text: str) -> list[int]:
    """Every source number cited, in order of appearance (ranges expanded)."""
    out: list[int] = []
    for m in _CITE.finditer(text or ""):
        for a, b in _CITE_NUM.findall(m.group(0)):
            lo = int(a)
            hi = int(b) if b else lo
            if hi < lo or hi - lo > 50:
                hi = lo
            out.extend(range(lo, hi + 1))
    return out


def strip_citations(text: str) -> str:
    return _CITE.sub(" ", text or "")


def numbers_in(text: str) -> list[str]:
    """Normalised numbers in text ("120,300" -> "120300", "0.40" -> "0.4")."""
    return [normalize_number(m.group(1)) for m in _NUMBER.finditer(strip_citations(text))]


def says_missing(text: str) -> bool:
    """Does the text say, anywhere, that the sources lack something?"""
    return bool(_ABSTAIN.search(text or ""))


def is_abstention(text: str) -> bool:
    """An abstention leads with "the sources do not contain ..." (it may go on to cite
    what the sources do say), or says so and cites nothing at all. A cited answer that
    only notes a missing detail further on is an answer, not an abstention."""
    ss = sentences(text)
    if not ss:
        return False
    return says_missing(ss[0]) or (says_missing(text) and not citation_numbers(text))


def sentences(text: str) -> list[str]:
    """Sentences of an answer; citations written after the full stop ("... year. [1]")
    stay with the sentence they close."""
    out: list[str] = []
    # a citation followed by more text closes a sentence, whatever the next character
    # ("... [2] 1 Since ..."): each quoted piece is checked against its own source
    text = re.sub(r"(\[\s*S?\d+(?:\s*(?:[,;]|-|–|and)\s*S?\d+)*\s*\])[ \t]+(?=[^\s\[,.;:)])", "\\1\n", text or "")
    # a line break ends a sentence (a list item, a heading); within a line the one
    # sentence splitter of every caller (scirag_helpers.text) decides
    for part in (s for line in text.split("\n") for s in text_rules.sentences(line)):
        part = (part or "").strip()
        if not part:
            continue
        m = _LEADING_CITES.match(part)
        if m and out and _CITE.search(m.group(1)):
            out[-1] = out[-1] + " " + m.group(1).strip()
            part = part[m.end() :].strip()
            if not part:
                continue
        out.append(part)
    return out


def uncited_claims(text: str) -> list[str]:
    """Sentences that state something (four words or more), are not an abstention
    and carry no citation: the standing order is to cite every claim."""
    out = []
    for s in sentences(text):
        if len(re.findall(r"[A-Za-z]{2,}", s)) < 4 or says_missing(s) or _CITE.search(s):
            continue
        # a citation may close the paragraph after the sentence's full stop
        out.append(s)
    return out


def check_citations(text: str, provided: set[int]) -> dict:
    cited = citation_numbers(text)
    invalid = sorted({n for n in cited if n not in provided})
    abstained = is_abstention(text)
    ok = not invalid and (bool(cited) or abstained)
    return {
        "ok": ok,
        "cited": sorted(set(cited)),
        "invalid": invalid,
        "reason": None
        if ok
        else ("cites a source that was not provided" if invalid else "states something without citing any source"),
    }


def check_numbers(text: str, sources_by_n: dict[int, str]) -> dict:
    cited = {n for n in citation_numbers(text) if n in sources_by_n}
    pool: set[str] = set()
    for n in cited:
        pool.update(numbers_in(sources_by_n[n]))
    found = numbers_in(text)
    ungrounded = sorted({x for x in found if x not in pool}, key=lambda x: (len(x), x))
    return {"ok": not ungrounded, "numbers": len(found), "ungrounded": ungrounded}


_TABLE_LINE = re.compile(r"\s\|\s")


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of a source paragraph (one splitter for the answerer and the
    supports check, so a quoted sentence is a unit the check knows)."""
    return text_rules.sentences(" ".join((paragraph or "").split()))


SUPPORT_MIN_TERMS = 0.65  # share of a sentence's key terms one unit of the source must hold


def key_terms(text: str) -> set[str]:
    """Content words of a text, lower-cased and cut to 5 letters (a crude stem that
    joins plural and derived forms), without the answer's connective words."""
    return support_terms(strip_citations(text))


def _split_cells(line: str) -> list[str]:
    # the loader writes `label | v1 | v2` (no outer pipes): a leading " | " is an empty
    # first cell; markdown's outer pipes are dropped
    t = line.rstrip()
    if t.startswith("|") and t.endswith("|") and len(t) > 1:
        t = t[1:-1]
    return [c.strip() for c in t.split("|")]


_DIGIT = re.compile(r"\d")
_CAPTION = re.compile(r"^\s*(Table|TABLE)\s+[A-Z]?\d+[a-z]?\s*[:.]")


def _valued(cell: str) -> bool:
    """A cell that holds a value: a number with at most a few letters of unit or
    magnitude ("65.99 ± 0.58%", "3.8K", "1.0e-4", "14.2B"), or a dash / check mark
    standing for one; "1-shot 5-way" or "mT5 XXL" are names."""
    c = cell.strip()
    if c in ("-", "–", "—", "✓", "✗"):
        return True
    if re.search(r"\d-[A-Za-z]", c):
        return False  # "20-way", "5-shot", "2-layer": a setting's name
    # starts with the number ("A@20", "T5" are names); at most a few letters of unit
    return bool(re.match(r"[\s(~∼≈<>±+\-−–—.$]*\d", c)) and len(re.findall(r"[A-Za-z]", c)) <= 3


def parse_table(text: str) -> dict | None:
    """The table the loader writes (caption line, header line(s), one `label | v1 | v2`
    line per row) or a pipe table inside other text, read leniently: header lines are
    the pipe lines before the first row with a value cell, stacked column-wise into
    column names; a row's label is its leading cells without values; a row with no
    values labels the rows under it (a group, or a label printed on its own line), and
    a row with an empty label continues the label above it. Lines without pipes are
    the caption. None when the text holds fewer than two pipe lines."""
    lines = [x for x in (text or "").split("\n") if x.strip()]
    pipe = [x for x in lines if "|" in x and len(_split_cells(x)) >= 2]
    if len(pipe) < 2:
        return None
    caption = [x.strip() for x in lines if x not in pipe]
    # a table of words ("Reformer | O(T log Td) | O(T log T + Td)") has no value cell:
    # read again with every line under the first that fills all its cells as a row,
    # when the lines form a grid of short cells (prose with a "|" in it, "p(y | x)",
    # does not)
    return _read_table(pipe, caption, words=False) or (
        _read_table(pipe, caption, words=True) if _word_grid(pipe) else None
    )


# a cell of a table of words is a name or a short phrase, not a piece of a sentence
WORD_CELL_MAX = 60  # characters
WORD_CELL_MAX_WORDS = 5  # of three letters or more ("O ( T log Td )" has one)


def _word_grid(pipe: list[str]) -> bool:
    """A header and at least two rows of short cells, no formula ("$", "\\": LaTeX's
    |x| and p(y | x) are not columns, nor is prose with a bar in it)."""
    cells = [c for x in pipe for c in _split_cells(x)]
    return len(pipe) >= 3 and all(
        len(c) <= WORD_CELL_MAX
        and len(re.findall(r"[A-Za-z]{3,}", c)) <= WORD_CELL_MAX_WORDS
        and "$" not in c
        and "\\" not in c
        for c in cells
    )


def _read_table(pipe: list[str], caption: list[str], words: bool) -> dict | None:
    header: list[list[str]] = []
    rows: list[dict] = []
    group = ""
    started = False
    mixed = False  # a row of words among rows of values
    for x in pipe:
        cells = _split_cells(x)
        # the first cell is the row label (OPT's "125M" too); further cells without
        # values are label columns as well
        n_label = 1
        while n_label < len(cells) and not _valued(cells[n_label]):
            n_label += 1
        has_values = any(_valued(c) for c in cells[n_label:])
        # a line under the header that fills every cell of it, its own label included, is
        # a row of words ("Optimizer algorithm | Adam", "Reformer | O(T log Td)"); a
        # second header line leaves the label cell empty or spans fewer columns
        full = bool(header) and len(cells) == len(header[0]) and all(cells)
        if not has_values and full and (words or started):
            # (under rows of values too: "Transition function | MLP(1 Layer)" among
            # "Learning rate | 3e-4" is a row, not a label for the rows under it)
            n_label, has_values = 1, True
            mixed = started
        if not started and not has_values:
            header.append(cells)
            continue
        started = True
        label = " ".join(c for c in cells[:n_label] if c)
        if not has_values:
            if label.startswith("(") and rows and rows[-1]["inherited"]:
                # "(finetuned)" under a row whose label sat on the line above: the rest of that label
                rows[-1]["label"] += " " + label
                rows[-1]["inherited"] = False
                continue
            group = label if label else group  # a group row, or a label on its own line
            continue
        inherited = not label and bool(group)
        if not label and group:
            label = group
        ctx = group if group and group != label else ""
        rows.append(
            {
                "label": label or (rows[-1]["label"] if rows else ""),
                "group": ctx,
                "cells": cells,
                "n_label": n_label,
                "line": x.strip(),
                "inherited": inherited,
            }
        )
    if not rows:
        return None
    if mixed:
        # a table whose rows hold words as well as values: a full line under the first
        # header line is its first row ("Parameter name | Value" over "Optimizer
        # algorithm | Adam"), not a second header line
        first = [
            {"label": h[0], "group": "", "cells": h, "n_label": 1, "line": " | ".join(h), "inherited": False}
            for h in header[1:]
            if len(h) == len(header[0]) and all(h)
        ]
        header = [h for i, h in enumerate(header) if i == 0 or not (len(h) == len(header[0]) and all(h))]
        rows = first + rows
    width = max(len(r["cells"]) for r in rows)
    names = [""] * width
    for h in header:
        # a shorter header line sits over the right-hand (value) columns
        shift = width - len(h) if len(h) < width else 0
        for j, c in enumerate(h):
            if c and j + shift < width:
                # stacked lines of one column read as one name ("Train" over "bpc"); the
                # loader writes a spanning group into the cell itself ("group / column")
                names[j + shift] = (names[j + shift] + " " + c) if names[j + shift] else c
    return {
        "caption": " ".join(caption),
        "columns": names,
        "header_lines": [" | ".join(h) for h in header],
        "rows": rows,
    }


def parse_tables(text: str) -> list[dict]:
    """Every table in a text (a consolidated group or a page can hold several): each
    blank-line separated block with pipe lines is read by parse_table, a "Table N:"
    caption in the block next to it joining its caption."""
    blocks = [b for b in re.split(r"\n\s*\n", text or "") if b.strip()]
    tabular = [b for b in blocks if parse_table(b) is not None]
    if len(tabular) <= 1:
        # one table: all the other text of the chunk is its context (caption, lead-in)
        t = parse_table(text)
        return [t] if t is not None else []
    out = []
    for i, b in enumerate(blocks):
        t = parse_table(b)
        if t is None:
            continue
        near = [
            blocks[j]
            for j in (i - 1, i + 1)
            if 0 <= j < len(blocks) and _CAPTION.match(blocks[j]) and parse_table(blocks[j]) is None
        ]
        if near and not _CAPTION.match(t["caption"]):
            t["caption"] = " ".join([t["caption"], *(" ".join(x.split()) for x in near)]).strip()
        out.append(t)
    return out


def row_columns(table: dict, row: dict) -> list[tuple[str, str]]:
    """(column name, cell) for the value cells of a row."""
    names = table["columns"]
    shift = len(names) - len(row["cells"]) if len(row["cells"]) < len(names) else 0
    return [
        (names[j + shift] if j + shift < len(names) else "", c)
        for j, c in enumerate(row["cells"])
        if j >= row["n_label"]
    ]


class SupportUnit(NamedTuple):
    """One place a claim must sit together in, with what sentence_supported compares."""

    text: str
    cols: list  # (column name, cell) pairs for a table row, empty for prose
    numbers: frozenset
    lower: str
    terms: frozenset  # key_terms


@functools.lru_cache(maxsize=256)
def support_units(source_text: str) -> tuple[SupportUnit, ...]:
    """The places a claim must sit together in, with their numbers and key terms (cached
    per source text: the answerer checks every candidate sentence, dozens per question,
    against the same few sources)."""
    return tuple(
        SupportUnit(text, cols, frozenset(numbers_in(text)), text.lower(), frozenset(key_terms(text)))
        for text, cols in _build_support_units(source_text or "")
    )


def _build_support_units(source_text: str) -> list[tuple[str, list]]:
    """The places a claim must sit together in: the sentences of prose, and the rows
    of a table, each row read with its label (and the group label above it), the
    table's header lines and caption (the row's column names are there). Returns
    (text, columns): columns are (column name, cell) pairs for a table row, empty for
    prose."""
    out: list[tuple[str, list]] = []
    for table in parse_tables(source_text):
        head = " ".join(table["header_lines"] + [table["caption"]])
        for r in table["rows"]:
            label = " ".join(x for x in (r["group"], r["label"]) if x)
            cols = [("", label)] + row_columns(table, r)
            out.append((" ".join((label, r["line"], head)), cols))
    for block in re.split(r"\n\s*\n", source_text or ""):
        # A table's lines are its rows (above). Outside a table, only a line with a
        # spaced bar ("a | b") is taken for a stray row: a bar inside a formula
        # ("pk ≈ π(at+1|o1, ..., ot)") is prose, and dropping its line left the
        # answerer's verbatim quote of that sentence with no unit to be checked against.
        tabular = parse_table(block) is not None
        lines = [x for x in block.split("\n") if x.strip() and not ("|" in x and (tabular or _TABLE_LINE.search(x)))]
        text = " ".join(lines)
        out.extend((p, []) for p in split_sentences(text))
    return out


# Capitalised only because they open a sentence.
_STARTERS = frozenset(
    """overall however thus therefore finally additionally moreover according based both each
yes no in on at as after before since while although because if our its their his her it we they you i there here
first second third then also further furthermore specifically notably instead""".split()
)
_NAME = re.compile(r"(?<![\w-])(?:[A-Z][\w.-]*[A-Z0-9][\w.-]*|[A-Z][a-z]+(?:-[A-Za-z0-9]+)*)(?![\w-])")


def names_in(sentence: str) -> set[str]:
    """Proper names a claim is about (capitalised words other than a sentence opener,
    acronyms, model names with digits): the source must name them too."""
    body = strip_citations(sentence).strip()
    out = set()
    for m in _NAME.finditer(body):
        word = m.group(0).lower().rstrip(".-")
        if word in SUPPORT_STOP or (m.start() == 0 and word in _STARTERS):
            continue
        out.add(m.group(0).lower().rstrip(".-"))
    return out


def _numbers_in_right_columns(nums: set[str], kt: set[str], cols: list, claim: str) -> bool:
    """Each number of the claim sits in the row label or in a column whose name shares
    a key term with the claim, or that the claim names word for word when the name has
    no key term ("Parameter | Value": "Value: 0.25"). A table without column names
    cannot tell."""
    if not cols or not any(h for h, _ in cols[1:]):
        return True
    low = claim.lower()

    def named(i: int) -> bool:
        name = cols[i][0].strip().lower()
        ts = key_terms(name)
        if ts:
            return bool(ts & kt)
        return bool(name) and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", low) is not None

    for x in nums:
        places = [i for i, (_, c) in enumerate(cols) if x in numbers_in(c)]
        # a number that is in no cell is part of a name ("5-shot 5-way"), checked above
        if places and not any(i == 0 or named(i) for i in places):
            return False
    return True


def is_claim(sentence: str) -> bool:
    """A sentence that states something: four words, or a number, and not an abstention."""
    if says_missing(sentence):
        return False
    return len(re.findall(r"[A-Za-z]{2,}", strip_citations(sentence))) >= 4 or bool(numbers_in(sentence))


def sentence_supported(sentence: str, sources_by_n: dict[int, str], min_terms: float = SUPPORT_MIN_TERMS) -> bool:
    """One cited source holds the sentence's numbers, its proper names and most of its
    key terms in one sentence or table row (numbers in the columns the claim names)."""
    cited = [n for n in dict.fromkeys(citation_numbers(sentence)) if n in sources_by_n]
    nums = set(numbers_in(sentence))
    kt = key_terms(sentence)
    names = names_in(sentence)
    for n in cited:
        for unit in support_units(sources_by_n[n]):
            if not nums <= unit.numbers:
                continue
            if any(x not in unit.lower for x in names):
                continue
            if kt and len(kt & unit.terms) < min_terms * len(kt):
                continue
            if _numbers_in_right_columns(nums, kt, unit.cols, sentence):
                return True
    return False


def check_supports(text: str, sources_by_n: dict[int, str]) -> dict:
    """Per claim sentence: supported by a source it cites (sentence_supported). An
    uncited claim is unsupported. ``unsupported`` lists 1-based claim positions."""
    claims = [s for s in sentences(text) if is_claim(s)]
    bad = [i for i, s in enumerate(claims, 1) if not sentence_supported(s, sources_by_n)]
    return {"ok": not bad, "claims": len(claims), "unsupported": bad, "supported": len(claims) - len(bad)}


def check_abstention(text: str, expect_abstain: bool | None) -> dict:
    abstained = is_abstention(text)
    if expect_abstain is None:
        return {"ok": None, "abstained": abstained, "expected": None}
    return {"ok": abstained == expect_abstain, "abstained": abstained, "expected": expect_abstain}


def run_checks(
    answer_text: str, sources: list[dict], expect_abstain: bool | None = None, text_key: str = "text"
) -> dict:
    """All mechanical checks at once. ``sources`` are the numbered sources as shown to
    the answerer: dicts with ``n`` and the shown text under ``text_key``."""
    by_n = {int(s["n"]): s.get(text_key) or "" for s in sources}
    cit = check_citations(answer_text, set(by_n))
    num = check_numbers(answer_text, by_n)
    sup = check_supports(answer_text, by_n)
    abst = check_abstention(answer_text, expect_abstain)
    return {
        "citations_ok": cit["ok"],
        "cited": cit["cited"],
        "invalid_citations": cit["invalid"],
        "numbers_ok": num["ok"],
        "numbers": num["numbers"],
        "ungrounded_numbers": num["ungrounded"],
        "supports_ok": sup["ok"],
        "claims": sup["claims"],
        "unsupported": sup["unsupported"],
        "abstained": abst["abstained"],
        "abstention_expected": abst["expected"],
        "abstention_ok": abst["ok"],
        "uncited_sentences": len(uncited_claims(answer_text)),
    }
