#!/usr/bin/env python3
"""Readers on the primary only against the primary plus two hot standbys (issue 27).

Makes two streaming hot standbys of the project cluster (pg_basebackup -R, in the
git-ignored .replicas/ folder; removed at the end), then runs --clients reader threads
for --seconds against each set-up, every thread on its own connection made by
scirag.routing.connect_reader (as scirag ask does), asking the domain's questions
through scirag.retrieve (interactive, k 10) as scirag_reader:

- primary: SCIRAG_READ_DSN unset, every reader on the primary;
- primary + 2 standbys: SCIRAG_READ_DSN lists the primary and both standbys
  (load_balance_hosts=random), so readers spread over the three nodes.

Reports per set-up: calls, throughput, p50/p99 latency, errors, and how many
connections each node took. All nodes share this machine's cores: read scaling shows
only where the nodes have cores (or machines) of their own; here the point is zero
errors and correct routing.

    SCIRAG_PGPORT=54329 .venv/bin/python scripts/bench_replicas.py --db scirag --seconds 60
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg
import yaml
from psycopg.conninfo import conninfo_to_dict

from scirag import db, routing

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "py"))
from standby_cluster import start_standby  # noqa: E402


def run(label: str, questions: list[str], clients: int, seconds: float) -> dict:
    lat: list[float] = []
    errors: Counter = Counter()
    nodes: Counter = Counter()
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker(i: int) -> None:
        try:
            conn = routing.connect_reader(None, role="scirag_reader", autocommit=True)
        except psycopg.Error as exc:
            with lock:
                errors[type(exc).__name__] += 1
            return
        with conn:
            node = conn.execute("SELECT current_setting('cluster_name'), pg_is_in_recovery()").fetchone()
            with lock:
                nodes[f"{node[0] or 'primary'}{' (standby)' if node[1] else ''}"] += 1
            n = i
            while time.perf_counter() < stop:
                q = questions[n % len(questions)]
                n += 1
                t0 = time.perf_counter()
                try:
                    conn.execute("SELECT count(*) FROM scirag.retrieve(%s, 10)", (q,)).fetchone()
                    with lock:
                        lat.append((time.perf_counter() - t0) * 1000)
                except psycopg.Error as exc:
                    with lock:
                        errors[exc.sqlstate or type(exc).__name__] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    out = {
        "setup": label,
        "calls": len(lat),
        "per_second": len(lat) / wall,
        "p50_ms": statistics.median(lat) if lat else None,
        "p99_ms": lat[int(0.99 * (len(lat) - 1))] if lat else None,
        "errors": dict(errors),
        "connections_per_node": dict(nodes),
    }
    print(
        f"{label:<24} {out['calls']:>6} calls  {out['per_second']:7.1f}/s  p50 {out['p50_ms']:.1f} ms  "
        f"p99 {out['p99_ms']:.1f} ms  errors {sum(errors.values())}  nodes {dict(nodes)}",
        flush=True,
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", default=db.DEFAULT_DB, help="database with a loaded corpus (default: scirag, the demo)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    args = ap.parse_args()
    primary = db.with_dbname(db.default_dsn(), args.db)
    params = conninfo_to_dict(primary)
    os.environ["SCIRAG_DSN"] = primary
    os.environ.pop("SCIRAG_READ_DSN", None)
    questions = [q["question"] for q in yaml.safe_load((ROOT / "domain" / "questions.yaml").read_text())["questions"]]
    base_port = int(params.get("port") or 5432)
    standbys = []
    try:
        for i in (1, 2):
            standbys.append(start_standby(primary, f"bench_standby{i}", base_port + i))
        results = [run("primary only", questions, args.clients, args.seconds)]
        hosts = ",".join([str(params["host"])] + [str(s.folder) for s in standbys])
        ports = ",".join([str(base_port)] + [str(s.port) for s in standbys])
        os.environ["SCIRAG_READ_DSN"] = f"host={hosts} port={ports} user={params.get('user', 'postgres')}"
        results.append(run("primary + 2 standbys", questions, args.clients, args.seconds))
    finally:
        for s in standbys:
            s.remove()
    print(f"(machine: {os.cpu_count()} cores shared by every node and the clients)")
    return 0 if all(not r["errors"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
