#!/usr/bin/env python3
"""Questions about table cells, written mechanically from the nine papers' hand-checked
spot cells (``tables.jsonl``: 204 cells of 68 tables), for ``scirag eval answer``:

    python3 scripts/table_cell_questions.py ../shared/data/papers/tables.jsonl /tmp/cells.jsonl
    .venv/bin/scirag eval answer --dsn "$P" --answerer extractive --questions /tmp/cells.jsonl

Each cell becomes "<the caption's first sentence>: what is the <column group> <column>
of <row> (<row context>)?" (``--form caption``; ``does``, ``possessive`` and ``bare``
word it otherwise, ``bare`` without the caption), answered by the printed value (or
its leading number). The
nine development questions ask a table cell half of the time; these ask every spot cell
the same way, so a change to how the answerer finds a cell is measured on 204 cells
instead of 18, none of them phrased for it. The template is not how a reader writes:
it shows where the table reading fails, not how often a reader's question is answered.
The output goes outside the repository (the data stays in ../shared).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

_FIRST_SENTENCE = re.compile(r"(?<=[a-z0-9)])\.\s")
_LEADING_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


# the phrasings: "caption" is the one the table reading was developed on; the others
# were written afterwards to check that what it fixed holds for other wordings
FORMS = {
    "caption": lambda cap, col, row: f"{cap}: what is the {col} of {row}?",
    "does": lambda cap, col, row: f"What {col} does {row} reach in the {cap[:1].lower() + cap[1:]}?",
    "possessive": lambda cap, col, row: f"In the {cap[:1].lower() + cap[1:]}, what is {row}'s {col}?",
    "bare": lambda cap, col, row: f"What is the {col} of {row}?",
}


def questions(table: dict, form: str = "caption") -> list[dict]:
    """One question per spot cell of a tables.jsonl line."""
    caption = _FIRST_SENTENCE.split(table["caption_start"])[0].rstrip(". ")
    out = []
    for i, cell in enumerate(table["cells"]):
        column = " ".join(x for x in (cell.get("col_group"), cell["col"].strip()) if x)
        row = cell["row"] + (f" ({cell['row_context']})" if cell.get("row_context") else "")
        value = cell["value"].strip()
        lead = _LEADING_NUMBER.search(value)
        answers = [value] + ([lead.group(0)] if lead and lead.group(0) != value else [])
        out.append(
            {
                "paper": table["paper"],
                "id": f"{table['paper']}-{table['table'].replace(' ', '')}-c{i}",
                "question": FORMS[form](caption, column, row),
                "answers": answers,
                "where": table["table"],
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", type=Path, help="the papers' tables.jsonl")
    ap.add_argument("out", type=Path, help="where to write the questions (JSONL)")
    ap.add_argument("--form", choices=sorted(FORMS), default="caption", help="how the questions are worded")
    args = ap.parse_args(argv)
    rows = []
    for n, line in enumerate(args.tables.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.extend(questions(json.loads(line), args.form))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            print(f"{args.tables}: line {n}: not a table line ({exc})", file=sys.stderr)
            return 2
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} questions -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
