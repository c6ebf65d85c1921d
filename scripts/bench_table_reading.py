#!/usr/bin/env python3
"""How many of the nine papers' hand-checked spot cells the answerer's table reader
(scirag_helpers.checks.parse_tables, which the table-cell answers and the supports
check both use) finds by row label, column name and value, in the chunks as loaded:

    P="host=$PWD/.pgdata port=${SCIRAG_PGPORT:-54329} user=postgres dbname=scirag_papers"
    .venv/bin/python scripts/bench_table_reading.py ../shared/data/papers/tables.jsonl --dsn "$P" [-v]

A cell is found when a table whose caption holds the line's ``caption_start`` has a
row whose label holds the cell's row (or is held by it) and a column whose name holds
the cell's column, with exactly the printed value (whitespace and Unicode forms
ignored). It measures the loader's table text and the reader together; ``-v`` lists
the cells not found. Read-only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "plpy_helpers"))
from scirag_helpers import checks  # noqa: E402

CHUNKS_SQL = """
SELECT d.external_id, c.content
FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
"""


def norm(s: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s or "")).lower()


def found(cell: dict, tables: list[dict]) -> bool:
    for t in tables:
        for r in t["rows"]:
            label = norm(" ".join(x for x in (r["group"], r["label"]) if x))
            if norm(cell["row"]) not in label and label not in norm(cell["row"]):
                continue
            for name, value in checks.row_columns(t, r):
                if norm(cell["col"]) in norm(name) and norm(cell["value"]) == norm(value):
                    return True
    return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", type=Path, help="the papers' tables.jsonl")
    ap.add_argument("--dsn", required=True, help="a database holding the nine papers (scirag ingest)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the cells not found")
    args = ap.parse_args(argv)
    with psycopg.connect(args.dsn) as conn:
        chunks = conn.execute(CHUNKS_SQL).fetchall()
    if not chunks:
        print(f"{args.dsn}: no chunks (ingest ../shared/data/papers/manifest.jsonl first)", file=sys.stderr)
        return 2
    n_tables = with_caption = rows_right = n_cells = n_found = 0
    missed = []
    for line in args.tables.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        t = json.loads(line)
        cap = norm(t["caption_start"])[:40]
        texts = [c for doc, c in chunks if doc == t["paper"] and cap in norm(c)]
        tables = [p for c in texts for p in checks.parse_tables(c) if cap in norm(p["caption"])]
        n_tables += 1
        with_caption += bool(tables)
        rows_right += any(len(p["rows"]) == t["n_rows"] for p in tables)
        for cell in t["cells"]:
            n_cells += 1
            if found(cell, tables):
                n_found += 1
            else:
                missed.append(f"{t['paper']} {t['table']}: {cell['row']} / {cell['col']} = {cell['value']}")
    print(
        f"tables {n_tables}: read with their caption {with_caption}, with the right row count {rows_right}; "
        f"spot cells found by row, column and value: {n_found}/{n_cells} ({n_found / max(n_cells, 1):.3f})"
    )
    if args.verbose:
        print("\n".join(f"  not found: {m}" for m in missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
