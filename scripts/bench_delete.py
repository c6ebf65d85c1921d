#!/usr/bin/env python3
"""Deleting documents from a large corpus, measured and rolled back (issue 12).

Deleting a document takes its chunks out of the keyword index: every compacted block
of each of their lexemes is read (blocks are in impact order, not by chunk id), and
the blocks that hold one of them are rewritten (scirag.kw_blocks_remove, from the
chunk delete trigger). This deletes the newest N documents in one statement, for each
N asked, as the loader, inside a transaction that is rolled back, so the corpus is
left as it was; it prints the time of each and the time spent in kw_blocks_remove.

    scripts/bench_delete.py --db scirag_scale_1000k                 # 1, 200 and 1,000 documents
    scripts/bench_delete.py --db scirag_scale_100k --docs 1,50
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

import psycopg  # noqa: E402

from scirag import db  # noqa: E402

DELETE = "DELETE FROM scirag.documents WHERE id IN (SELECT id FROM scirag.documents ORDER BY id DESC LIMIT %s)"
REMOVE_MS = """SELECT coalesce(sum(total_time), 0) FROM pg_stat_xact_user_functions
               WHERE schemaname = 'scirag' AND funcname = 'kw_blocks_remove'"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="database to measure (a loaded corpus, e.g. scirag_scale_1000k)")
    ap.add_argument("--dsn", default=None, help="superuser DSN of the server (default: the project cluster)")
    ap.add_argument("--docs", default="1,200,1000", help="comma-separated numbers of documents to delete")
    args = ap.parse_args()
    sizes = [int(x) for x in args.docs.split(",") if x.strip()]
    if not sizes or min(sizes) < 1:
        sys.exit(f"--docs must list positive numbers, got {args.docs!r}")
    dsn = db.with_dbname(args.dsn or db.default_dsn(), args.db)
    rows = []
    with psycopg.connect(dsn) as conn:
        chunks = conn.execute("SELECT count(*) FROM scirag.chunks").fetchone()[0]
        for n in sizes:
            conn.execute("SET LOCAL track_functions = 'pl'")
            conn.execute(f"SET LOCAL ROLE {db.LOADER_ROLE}")
            t = time.perf_counter()
            deleted = conn.execute(DELETE, (n,)).rowcount
            wall = time.perf_counter() - t
            conn.execute("RESET ROLE")
            remove = conn.execute(REMOVE_MS).fetchone()[0] / 1000
            conn.rollback()  # the corpus stays as it was
            rows.append((deleted, wall, remove))
            print(f"[bench_delete] {deleted} documents: {wall:.1f} s", file=sys.stderr, flush=True)
    print(
        f"\n{args.db}: {chunks:,} chunks; the newest N documents deleted in one statement, as the loader, rolled back"
    )
    print("| documents | seconds | in kw_blocks_remove |")
    print("|---|---|---|")
    for deleted, wall, remove in rows:
        print(f"| {deleted:,} | {wall:.2f} | {remove:.2f} |")


if __name__ == "__main__":
    main()
