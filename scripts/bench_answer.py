#!/usr/bin/env python3
"""Latency of scirag.answer with the extractive answerer, as the reader role: each
question of a question file is answered `--rounds` times (after one warm-up call that
loads the embedder into the backend), and the script prints p50 / p95 / max of the
wall time seen by the client and of the function's own trace, overall and per stage.

  .venv/bin/python scripts/bench_answer.py --dsn "host=... dbname=scirag" [--questions domain/questions.yaml]

A benchmark, not a test: it prints numbers and asserts nothing."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.evaluation import qa as evalqa  # noqa: E402
from scirag.evaluation.metrics import percentile  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", default=None, help="libpq DSN (default: the project cluster, database scirag)")
    ap.add_argument("--questions", type=Path, action="append", help="question file(s), YAML or JSONL")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--options", default='{"answerer": "extractive"}', help="scirag.answer options (JSON)")
    args = ap.parse_args()
    qs = evalqa.load_question_files(args.questions or [evalqa.QUESTIONS_FILE])
    wall, inside, stages = [], [], {}
    with db.connect(args.dsn or db.default_dsn(), role=db.READER_ROLE, autocommit=True) as conn:
        conn.execute("SELECT scirag.answer(%s, %s)", (qs[0].question, args.options))  # warm-up
        for _ in range(args.rounds):
            for q in qs:
                t0 = time.perf_counter()
                a = conn.execute("SELECT scirag.answer(%s, %s)", (q.question, args.options)).fetchone()[0]
                wall.append((time.perf_counter() - t0) * 1000)
                inside.append(a["trace"]["ms"])
                for s in a["trace"]["stages"]:
                    stages.setdefault(s["stage"], []).append(s["ms"])

    def line(name, xs):
        return (
            f"{name:<12} n={len(xs):<4} p50 {percentile(xs, 50):7.1f} ms  p95 {percentile(xs, 95):7.1f} ms  "
            f"max {max(xs):7.1f} ms  mean {statistics.mean(xs):7.1f} ms"
        )

    print(f"scirag.answer {args.options} on {len(qs)} questions x {args.rounds} rounds")
    print(line("wall", wall))
    print(line("trace", inside))
    for name, xs in stages.items():
        print(line("  " + name, xs))
    print(json.dumps({"p50_ms": round(percentile(wall, 50), 1), "p95_ms": round(percentile(wall, 95), 1)}))


if __name__ == "__main__":
    main()
