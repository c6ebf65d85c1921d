"""Table-cell answers: the cell of a table that the question's row and column name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scirag_helpers import checks
from scirag_helpers.answer.question import _negated, _norm_entity, question_entities, sizes_in_question
from scirag_helpers.words import terms


_SUMMARY_ROWS = frozenset({"overall", "all"})  # row labels that are stop words (scirag_helpers.words)

# a value with its magnitude ("40K" steps, "38M" parameters): a number to a reader,
# though the numbers check reads none in it
_MAGNITUDE = re.compile(r"\d+(?:[.,]\d+)?\s?[KMBT]", re.I)


@dataclass
class Cell:
    n: int
    text: str  # the answer sentence (without citation)
    score: float
    coverage: float
    row_match: float
    col_match: float
    context: str = ""  # the row line, the caption and the header lines
    value: str = ""  # the cell, when the question names its column ("" when the whole row answers)


def _abbrev_match(name: str, question: str) -> bool:
    """A column named by an abbreviation of a capitalised question word (Sw for Swahili)."""
    return bool(_abbreviated(name, question))


def _abbreviated(name: str, question: str) -> list[str]:
    """The question words a column name abbreviates: a capitalised word it starts
    ("Sw": Swahili), or consecutive words it gives the initials of ("LR": learning rate)."""
    name = name.strip()
    if re.fullmatch(r"[A-Z]{2,4}", name):
        words = re.findall(r"[A-Za-z]+", question)
        for i in range(len(words) - len(name) + 1):
            span = words[i : i + len(name)]
            if "".join(x[0] for x in span).upper() == name and all(len(x) > 1 for x in span):
                return span
        return []
    if not re.fullmatch(r"[A-Z][a-z]{1,3}\.?", name):
        return []
    stem = name.rstrip(".").lower()
    return [
        w
        for w in re.findall(r"[A-Za-z]+", question)
        if w[0].isupper() and w.lower().startswith(stem) and len(w) > len(stem)
    ]


def _in_order(label: list[str], qseq: list[str]) -> bool:
    """The label's words that the question uses come in the question's order."""
    pos = {}
    for i, t in enumerate(qseq):
        pos.setdefault(t, i)
    seen = [pos[t] for t in label if t in pos]
    return seen == sorted(seen)


def table_cell_answer(question: str, sources: list[dict], w: dict, attribute: list[str]) -> Cell | None:
    """The cell a question names by its row and its column, read from the table chunks
    among the sources: the row label (with its group) and the column name (with its
    group, "group / column") must share the question's terms, the table's caption,
    section and header count for the rest. Repeated row labels are told apart by the
    question's sizes in the row ("the 14.2B RWKV-4"), a label without words by the
    code the question gives ("A-B trials"). A row label that adds words the question
    does not use costs a little; one that negates ("without") what the question does
    not, a lot. A column named after the question's subject ("MuZero") or by an
    abbreviation of its words ("Sw") is named; a column that does not name the
    asked-for attribute (nor does the caption) is not. No column named: the whole row
    is quoted."""
    total = sum(w.values()) or 1.0
    qset = set(w)
    q_neg = _negated(question)
    named = question_entities(question)
    sizes = {num for num, _ in sizes_in_question(named)}
    codes = [e for e in named if not terms(e)]  # "A-B": a name without terms
    qseq = terms(question, True)
    qwords = {x.lower() for x in re.findall(r"[A-Za-z]+", question)}
    best: Cell | None = None
    for s, t in ((src, tab) for src in sources for tab in checks.parse_tables(src["text"])):
        ctx = set(terms(" ".join([t["caption"], s.get("section_path") or "", *t["header_lines"]]), True))
        for row in t["rows"]:
            label = " ".join(x for x in (row["group"], row["label"]) if x)
            lab = set(terms(label, True))
            cols = checks.row_columns(t, row)
            # a size the question gives ("the 14.2B RWKV-4") tells repeated labels apart
            # when a cell holds exactly that number
            row_nums = {
                "#" + checks.normalize_number(m.group(1))
                for _, c in cols
                for m in [re.fullmatch(r"(\d+(?:\.\d+)?)\s?[BMK]?", c.strip())]
                if m and m.group(1) in sizes
            }
            row_hit = (lab | (row_nums & qset)) & qset
            row_match = sum(w[x] for x in row_hit)
            # a label the question names as a code ("A-B trials"): no terms, but the same name
            code_hit = any(_norm_entity(e) == _norm_entity(label) for e in codes)
            # a summary row ("Overall", "All") is named by a word the stop list drops
            code_hit = code_hit or (label.strip().lower() in _SUMMARY_ROWS and label.strip().lower() in qwords)
            if code_hit:
                row_match += max(w.values())
            if row_match <= 0:
                continue
            extra = len([x for x in lab - qset if not x.startswith("#")])
            penalty = 0.04 * extra + (0.5 if _negated(label) != q_neg else 0.0)
            # the question's words in another order name another row ("de en" is not "en de")
            if not _in_order(terms(label, True), qseq):
                penalty += 0.03
            candidates = []
            for name, cell in cols:
                if (
                    not cell
                    or not (checks.numbers_in(cell) or _MAGNITUDE.fullmatch(cell.strip()))
                    and cell not in ("✓", "✗")
                ):
                    continue
                if set(terms(cell, True)) <= qset:
                    continue  # the question already gives this value ("the 20 bAbI tasks")
                ct = set(terms(name, True))
                col_hit = (ct | {t for x in _abbreviated(name.split(" / ")[-1], question) for t in terms(x)}) & qset
                col_match = sum(w[x] for x in col_hit)
                # a column name that adds a number the question does not ("1-shot" for a
                # 5-shot question) is another column
                col_extra = len(ct - qset)
                col_eff = col_match - 0.25 * max(w.values()) * len([x for x in ct - qset if x.startswith("#")])
                # a column named after the thing the question is about ("MuZero") beats one
                # sharing a common word with it ("Random" for "30 random no-op starts")
                subject = any(_norm_entity(e) == _norm_entity(name.split(" / ")[-1]) for e in named)
                if subject:
                    col_match += max(w.values())
                    col_eff += max(w.values())
                # ... unless another column is what the question asks for ("what R2D2
                # score does ... in the evaluation of MuZero"): that one weighs more
                if attribute and set(attribute) & ct:
                    col_match += 1.5 * max(w.values())
                    col_eff += 1.5 * max(w.values())
                candidates.append((col_eff, -col_extra, name, cell, col_hit, subject))
            if not candidates:
                continue
            col_match, neg_extra, name, cell, col_hit, subject = max(candidates, key=lambda c: (c[0], c[1]))
            col_match = max(col_match, 0.0)
            if attribute and not subject and not set(attribute) & (ctx | set(terms(name)) | col_hit):
                col_match = 0.0  # the column does not name what is asked ("ash content" is not "ratio")
            # the caption, section and header count half (as a sentence's title does)
            coverage = (
                sum(w[x] for x in row_hit | col_hit)
                + (max(w.values()) if code_hit else 0.0)
                + 0.5 * sum(w[x] for x in (ctx & qset) - row_hit - col_hit)
            ) / (total + (max(w.values()) if codes or code_hit else 0.0))
            head = attribute[-1] if attribute else None
            attr_ok = head is None or head in (ctx | set(terms(name)) | lab)
            score = (
                coverage
                + 0.5 * row_match / total
                + 0.5 * col_match / total
                - penalty
                + 0.02 * neg_extra
                - (0.15 if not attr_ok else 0.0)
            )
            label_name = t["columns"][0] if t["columns"] else ""
            lead = f"{label_name}: {label}" if label_name and label_name != label else label
            if col_match > 0:
                text = f"{lead}; {name}: {cell}" if name else f"{lead}: {cell}"
            else:
                vals = "; ".join(f"{h}: {c}" if h else c for h, c in cols if c)
                text = f"{lead}; {vals}" if lead else vals
            cand = Cell(
                s["n"],
                text,
                score,
                coverage,
                row_match,
                col_match,
                "\n".join([row["line"], label, t["caption"], *t["header_lines"]]),
                cell if col_match > 0 else "",
            )
            if best is None or cand.score > best.score + 1e-9:
                best = cand
    return best
