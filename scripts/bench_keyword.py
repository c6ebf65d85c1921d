#!/usr/bin/env python3
"""The keyword layer's two scorers side by side (issue 12): search_keyword with the numpy
scorer (scirag.kw_top, PL/Python) and with the PL/pgSQL one it falls back to where
PL/Python is out of reach (scirag.kw_top_sql: the released @v1.2 algorithm), over the
same SciFact train queries, alternately, as scirag_reader with row-level security on
and a stock server's JIT settings. Prints p50/p95/mean of each and how many queries
returned different results (scores to 1e-6, and the chunks above the n-th score).

The PL/pgSQL run takes PL/Python away from scirag_api inside one transaction of its own
connection (REVOKE, never committed), exactly what a server without PL/Python looks like
to search_keyword; so this needs a superuser DSN and changes nothing.

    scripts/bench_keyword.py --db scirag_scale_100k
    scripts/bench_keyword.py --db scirag_scale_1000k --queries 150
    scripts/bench_keyword.py --db scirag_scale_1000k --trace   # also what the numpy scorer read

--trace asks scirag.kw_top_trace() (superusers only) after each measured numpy query,
outside the timing, and prints medians: postings listed and read, blocks read, read
statements, chunks checked against scirag.chunks and how many of them were scored from
their tsvector.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg
from bench_scale import ROOT, STOCK_JIT  # (scripts/ is on sys.path: this script's folder; it sets up the rest)

from scirag import db
from scirag.evaluation.beir import read_queries
from scirag.evaluation.metrics import percentile

SQL = "SELECT chunk_id, score FROM scirag.search_keyword(%s, %s) ORDER BY rank"
NUMPY = "numpy (kw_top)"


def trace(conn: psycopg.Connection) -> dict | None:
    """What the numpy scorer did for the query just run (None where search_keyword had no
    term to score), asked as the superuser this connection logged in as (kw_top_trace is
    not a reader's), then back to the reader."""
    conn.execute("RESET ROLE")
    got = conn.execute("SELECT scirag.kw_top_trace()").fetchone()[0]
    conn.execute(f"SET LOCAL ROLE {db.READER_ROLE}")
    return got


def reader(dsn: str, without_plpython: bool) -> psycopg.Connection:
    conn = psycopg.connect(dsn)  # one transaction for the whole run: the REVOKE is never committed
    if without_plpython:
        conn.execute("REVOKE EXECUTE ON FUNCTION scirag.plpy_bootstrap() FROM PUBLIC, scirag_api, scirag_reader")
    conn.execute(f"SET LOCAL ROLE {db.READER_ROLE}")
    for k, v in STOCK_JIT.items():
        conn.execute(f"SET LOCAL {k} = '{v}'")
    return conn


def same(a: list, b: list) -> bool:
    if [round(s, 6) for _, s in a] != [round(s, 6) for _, s in b]:
        return False
    cut = a[-1][1] + 1e-6 if a else 0
    return {c for c, s in a if s > cut} == {c for c, s in b if s > cut}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="database to measure (a loaded corpus, e.g. scirag_scale_100k)")
    ap.add_argument("--dsn", default=None, help="superuser DSN of the server (default: the project cluster)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "scifact"))
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("-n", type=int, default=100, help="top n asked of search_keyword")
    ap.add_argument("--trace", action="store_true", help="also print what the numpy scorer read and checked")
    args = ap.parse_args()
    dsn = db.with_dbname(args.dsn or db.default_dsn(), args.db)
    queries, _ = read_queries(Path(args.data), "train")
    texts = list(queries.values())[: args.queries]
    runs = {NUMPY: reader(dsn, False), "PL/pgSQL (kw_top_sql)": reader(dsn, True)}
    times: dict[str, list[float]] = {}
    traces: list[dict] = []
    differ = 0
    for rnd in range(2):  # the first pass warms caches and plans; the second is measured
        times = {name: [] for name in runs}
        traces = []
        differ = 0
        for i, q in enumerate(texts, 1):
            got = {}
            for name, conn in runs.items():
                t = time.perf_counter()
                got[name] = conn.execute(SQL, (q, args.n)).fetchall()
                times[name].append((time.perf_counter() - t) * 1000)
                if args.trace and conn is runs[NUMPY] and (t := trace(conn)) is not None:
                    traces.append(t)
            a, b = got.values()
            differ += not same(a, b)
            if i % 50 == 0:
                print(f"[bench_keyword] pass {rnd + 1}: {i}/{len(texts)} queries", file=sys.stderr, flush=True)
    for conn in runs.values():
        conn.rollback()
        conn.close()
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"\n{args.db}: search_keyword n {args.n}, {len(texts)} SciFact train queries, reader, warm pass; load {load}")
    print("| scorer | p50 | p95 | mean (ms) |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {percentile(ts, 50):.1f} | {percentile(ts, 95):.1f} | {statistics.mean(ts):.1f} |")
    print(f"queries whose results differ: {differ} of {len(texts)}")
    if traces:
        print(f"\nwhat the numpy scorer did, median of {len(traces)} queries (scirag.kw_top_trace())")
        print(
            "| postings listed | postings read | share read | blocks listed | blocks read | reads | chunks checked | scored from tsvector | checks |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        med = {k: statistics.median(t[k] for t in traces) for k in traces[0] if k != "sql_fallback"}
        share = statistics.median(t["postings_read"] / max(t["postings"], 1) for t in traces)
        print(
            f"| {med['postings']:,.0f} | {med['postings_read']:,.0f} | {share:.0%} | {med['blocks']:,.0f} | {med['blocks_read']:,.0f} "
            f"| {med['reads']:.0f} | {med['checked']:,.0f} | {med['scored']:,.0f} | {med['checks']:.0f} |"
        )
        print(f"handed over to kw_top_sql: {sum(bool(t.get('sql_fallback')) for t in traces)} of {len(traces)}")


if __name__ == "__main__":
    main()
