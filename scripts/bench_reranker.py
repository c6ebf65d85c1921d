#!/usr/bin/env python3
"""Latency of the rerank stage as a reader: N fused candidates scored by the shipped
cross-encoder inside PostgreSQL (scirag.rerank, PL/Python, one onnxruntime thread).

    .venv/bin/python scripts/bench_reranker.py [--db scirag_beir_scifact] [--queries 40] [--candidates 50]
        [--deadline-ms 1500]

Needs a loaded SciFact database (``scirag eval beir ../shared/data/scifact`` loads it).
For each of the first --queries claims: the deep profile's fused candidates without
reranking (scirag.retrieve with rerank off, k = --candidates), then the timed call
scirag.rerank over them with the --rerank options. The first call of
the session loads the model and is reported apart. Prints one JSON object with the
p50/p95 of the rerank call, and of deep retrieval with and without reranking and of
the interactive profile at k 10 on the same claims. With --deadline-ms, deep retrieval
reranking the pool is also timed under that deadline, with the rerank stage's statuses
(how many candidates were scored in time). The machine may be shared: say so when
quoting the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.evaluation.metrics import percentile  # noqa: E402


def timed(conn, sql, args=()):
    t0 = time.perf_counter()
    rows = conn.execute(sql, args).fetchall()
    return (time.perf_counter() - t0) * 1000, rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="rerank stage latency as a reader")
    ap.add_argument("--db", default="scirag_beir_scifact")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument(
        "--rerank",
        default='{"reranker": "cross_encoder", "batch_size": 16, "entity_boost": 0}',
        help="the rerank options timed (JSON; the model folder gives the pair length)",
    )
    ap.add_argument(
        "--deadline-ms", type=float, default=None, help="also time deep retrieval reranking under this deadline"
    )
    args = ap.parse_args(argv)
    if not 1 <= args.candidates <= 1000 or not 1 <= args.queries <= 10000:
        raise SystemExit("bench_reranker: --candidates must be 1-1000 and --queries 1-10000")
    if args.deadline_ms is not None and not 0 <= args.deadline_ms <= 600000:
        raise SystemExit("bench_reranker: --deadline-ms must be 0-600000")
    dsn = db.benchmark_dsn(os.environ.get("SCIRAG_DSN"), args.db)
    claims = [json.loads(line)["text"] for line in open(args.data / "queries.jsonl", encoding="utf-8")]
    claims = claims[: args.queries]
    with db.connect(dsn, role=db.READER_ROLE, autocommit=True) as reader:
        opts = json.loads(args.rerank)
        on = json.dumps({"pool": args.candidates, "rerank": opts})
        off = json.dumps({"rerank": {"reranker": "none"}})
        pools = []
        for q in claims:
            _, rows = timed(
                reader,
                "SELECT chunk_id, content FROM scirag.retrieve(%s, %s, profile => 'deep', options => %s)",
                (q, args.candidates, off),
            )
            pools.append(rows)
        first_ms, _ = timed(
            reader,
            "SELECT status FROM scirag.rerank(%s, %s, %s, %s)",
            (claims[0], [r[0] for r in pools[0]], [r[1] for r in pools[0]], json.dumps(opts)),
        )
        rerank_ms, statuses = [], set()
        for q, rows in zip(claims, pools):
            ms, got = timed(
                reader,
                "SELECT status FROM scirag.rerank(%s, %s, %s, %s)",
                (q, [r[0] for r in rows], [r[1] for r in rows], json.dumps(opts)),
            )
            rerank_ms.append(ms)
            statuses |= {g[0] for g in got}
        deep_ms, deep_off_ms, inter_ms = [], [], []
        for q in claims:
            deep_ms.append(
                timed(
                    reader, "SELECT chunk_id FROM scirag.retrieve(%s, 10, profile => 'deep', options => %s)", (q, on)
                )[0]
            )
            deep_off_ms.append(
                timed(
                    reader,
                    "SELECT chunk_id FROM scirag.retrieve(%s, 10, profile => 'deep', options => %s)",
                    (q, off),
                )[0]
            )
            inter_ms.append(timed(reader, "SELECT chunk_id FROM scirag.retrieve(%s, 10)", (q,))[0])
        deadline_ms, deadline_status = [], {}
        if args.deadline_ms is not None:
            under = json.dumps({"pool": args.candidates, "rerank": opts, "deadline_ms": args.deadline_ms})
            for q in claims:
                deadline_ms.append(
                    timed(
                        reader,
                        "SELECT chunk_id FROM scirag.retrieve(%s, 10, profile => 'deep', options => %s)",
                        (q, under),
                    )[0]
                )
                trace = reader.execute("SELECT scirag.last_trace()").fetchone()[0]
                st = next((s["status"] for s in trace["stages"] if s["stage"] == "rerank"), "no stage")
                deadline_status[st] = deadline_status.get(st, 0) + 1

    def p(xs):
        return {
            "p50": round(percentile(xs, 50), 1),
            "p95": round(percentile(xs, 95), 1),
            "mean": round(statistics.mean(xs), 1),
        }

    print(
        json.dumps(
            {
                "db": args.db,
                "queries": len(claims),
                "candidates": args.candidates,
                "rerank_options": opts,
                "status": sorted(statuses),
                "first_call_ms (model load)": round(first_ms, 1),
                "rerank_ms": p(rerank_ms),
                "deep_k10_rerank_pool_ms": p(deep_ms),
                "deep_k10_no_rerank_ms": p(deep_off_ms),
                "interactive_k10_ms": p(inter_ms),
                **(
                    {
                        f"deep_k10_rerank_pool_deadline_{args.deadline_ms:g}_ms": {
                            **p(deadline_ms),
                            "max": round(max(deadline_ms), 1),
                        },
                        "deadline_rerank_status": deadline_status,
                    }
                    if deadline_ms
                    else {}
                ),
                "load_average": os.getloadavg(),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
