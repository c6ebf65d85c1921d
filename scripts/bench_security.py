#!/usr/bin/env python3
"""Latency cost of the security checks (issue 13): p50/p95 of scirag.retrieve and of
scirag.answer as the reader role on the demo corpus, per configuration, and of
scirag.scope_is_empty(). Used for the checks of v1.1 and for the wall (policies/reader_wall:
the reader API runs as scirag_api, SECURITY DEFINER).

Give two databases holding the same corpus, one deployed without the change and one
with it (e.g. `sqitch revert --to schema/eval_answer_checks` on a copy): the calls
alternate between them question by question, so the load of a shared machine falls
on both alike. Each demo question (domain/questions.yaml) is asked --reps times per
configuration, after one warm-up pass per database (the embedder loads once per backend).

    .venv/bin/python scripts/bench_security.py --dsn before="host=... dbname=A" --dsn after="host=... dbname=B"
"""

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / d) for d in ("loader", "plpy_helpers")]

import yaml  # noqa: E402

from scirag import db  # noqa: E402
from scirag.metrics import percentile  # noqa: E402

CONFIGS = [("interactive", {}), ("interactive", {"layers": ["keyword"]}), ("interactive", {"preset": "high-precision"})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", action="append", required=True, help="LABEL=DSN (repeatable)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    questions = [q["question"] for q in yaml.safe_load((ROOT / "domain" / "questions.yaml").read_text())["questions"]]
    conns = {}
    for item in args.dsn:
        label, _, dsn = item.partition("=")
        conns[label] = db.connect(dsn, role=db.READER_ROLE, autocommit=True)
    for conn in conns.values():
        for q in questions:  # warm-up: embedder, plans, caches
            conn.execute("SELECT count(*) FROM scirag.retrieve(%s, 10)", (q,)).fetchone()
    for profile, options in CONFIGS:
        ms = {label: [] for label in conns}
        for _ in range(args.reps):
            for q in questions:
                for label, conn in conns.items():
                    t0 = time.perf_counter()
                    conn.execute(
                        "SELECT count(*) FROM scirag.retrieve(%s, 10, %s, %s)", (q, profile, json.dumps(options))
                    ).fetchone()
                    ms[label].append((time.perf_counter() - t0) * 1000)
        for label, xs in ms.items():
            print(
                f"{label:8s} retrieve {profile} {json.dumps(options):34s} n={len(xs):3d} "
                f"p50={percentile(xs, 50):7.2f} ms  p95={percentile(xs, 95):7.2f} ms"
            )
    ms = {label: [] for label in conns}
    for _ in range(args.reps):
        for q in questions:
            for label, conn in conns.items():
                t0 = time.perf_counter()
                conn.execute("SELECT scirag.answer(%s, '{}')", (q,)).fetchone()
                ms[label].append((time.perf_counter() - t0) * 1000)
    for label, xs in ms.items():
        print(
            f"{label:8s} answer (extractive){'':33s} n={len(xs):3d} "
            f"p50={percentile(xs, 50):7.2f} ms  p95={percentile(xs, 95):7.2f} ms"
        )
    ms = {label: [] for label in conns}
    for _ in range(300):
        for label, conn in conns.items():
            t0 = time.perf_counter()
            conn.execute("SELECT scirag.scope_is_empty()").fetchone()
            ms[label].append((time.perf_counter() - t0) * 1000)
    for label, xs in ms.items():
        print(
            f"{label:8s} scope_is_empty(){'':36s} n={len(xs):3d} "
            f"p50={percentile(xs, 50):7.2f} ms  p95={percentile(xs, 95):7.2f} ms"
        )
    for conn in conns.values():
        conn.close()


if __name__ == "__main__":
    main()
