#!/usr/bin/env python3
"""Latency of scirag.retrieve (interactive) against its parts, measured side by side.

For every BEIR query, in rotating order on one reader connection: scirag.retrieve
(query embedded in the database, a cache miss), the bare HNSW query (ORDER BY
embedding <=> q LIMIT 100) and the bare keyword query (scirag.search_keyword).
Prints p50/p95 of each and checks retrieve p50 <= 1.5 x (HNSW p50 + keyword p50)
+ the in-database query-embedding p50 (read from retrieve's own trace).

    .venv/bin/python scripts/bench_latency.py ../shared/data/scifact [--limit N]
Requires the corpus loaded by `scirag eval beir DIR` first.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "python" / d) for d in ("loader", "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.evaluation.beir import beir_dsn, read_queries  # noqa: E402
from scirag.evaluation.metrics import percentile  # noqa: E402

HNSW = """SELECT id FROM scirag.chunks WHERE embedding IS NOT NULL
          ORDER BY embedding OPERATOR(public.<=>) %s::public.vector LIMIT 100"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus_dir", type=Path)
    ap.add_argument("--split", default="train")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    dsn = beir_dsn(args.dsn, args.corpus_dir)
    queries, _ = read_queries(args.corpus_dir, args.split)
    items = list(queries.values())[: args.limit] if args.limit else list(queries.values())
    t = {"retrieve": [], "hnsw": [], "keyword": [], "embed": []}
    with db.connect(dsn, role=db.READER_ROLE, autocommit=True) as conn:
        conn.execute("SET hnsw.ef_search = 100")  # so LIMIT 100 really returns 100 rows
        conn.execute("SELECT scirag.embed_query('warm up the model')")
        for i, q in enumerate(items):

            def run_retrieve():
                # a fresh text per run defeats the query cache, so the embedding is really computed
                s = time.perf_counter()
                conn.execute("SELECT count(*) FROM scirag.retrieve(%s, 10)", (q + f" #{i}",)).fetchone()  # noqa: B023 - run within this iteration
                t["retrieve"].append((time.perf_counter() - s) * 1000)
                trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
                t["embed"].append(next(st["ms"] for st in trace["stages"] if st["stage"] == "embed"))

            vec = conn.execute("SELECT scirag.embed_query(%s)::text", (q,)).fetchone()[0]

            def run_hnsw():
                s = time.perf_counter()
                conn.execute(HNSW, (vec,)).fetchall()  # noqa: B023 - run within this iteration
                t["hnsw"].append((time.perf_counter() - s) * 1000)

            def run_keyword():
                s = time.perf_counter()
                conn.execute("SELECT count(*) FROM scirag.search_keyword(%s, 100)", (q,)).fetchone()  # noqa: B023 - run within this iteration
                t["keyword"].append((time.perf_counter() - s) * 1000)

            runs = [run_retrieve, run_hnsw, run_keyword]
            for fn in runs[i % 3 :] + runs[: i % 3]:  # rotate the order: no stage always runs warm
                fn()
            if (i + 1) % 200 == 0:
                print(f"  {i + 1}/{len(items)} queries", file=sys.stderr, flush=True)
    p = {k: (percentile(v, 50), percentile(v, 95)) for k, v in t.items()}
    print(f"queries: {len(items)}   (ms, median and p95, same run, same connection)")
    for k in ("retrieve", "hnsw", "keyword", "embed"):
        print(f"  {k:<9} p50 {p[k][0]:8.2f}   p95 {p[k][1]:8.2f}")
    bound = 1.5 * (p["hnsw"][0] + p["keyword"][0]) + p["embed"][0]
    print(
        f"target: retrieve p50 {p['retrieve'][0]:.2f} <= 1.5 x (hnsw + keyword) + embed = {bound:.2f}: "
        f"{'MET' if p['retrieve'][0] <= bound else 'NOT MET'}"
    )
    print(json.dumps({k: {"p50": round(v[0], 2), "p95": round(v[1], 2)} for k, v in p.items()}))


if __name__ == "__main__":
    main()
