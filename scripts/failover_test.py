#!/usr/bin/env python3
"""Failover under load on the local Patroni cluster (issue 27; scripts/cluster_up.sh first).

1. Starts `scirag serve` with SCIRAG_DSN / SCIRAG_READ_DSN of the cluster (every host
   listed; libpq finds the primary with target_session_attrs=read-write, the readers
   prefer standbys), and a reader that asks /v1/retrieve every 50 ms.
2. Ingests small documents one by one on the primary, each in the loader's own
   transaction; a document counts as acknowledged when its commit returned. On a lost
   connection the loader reconnects (to whichever node is primary now) and retries the
   same document: its content hash makes a retry of a committed document a duplicate,
   never a second row.
3. After a few documents, kills the primary's node the hard way: SIGKILL to its Patroni
   and then to its postmaster (killing only the postmaster makes Patroni restart it in
   place, which is a restart, not a failover). Patroni's leader key expires (ttl 10 s)
   and Patroni promotes the synchronous standby.
4. Reports the failover time (kill to the first commit on the new primary), the
   server's longest gap between good answers and its failed requests, and checks on the
   new primary that every acknowledged document is there exactly once (synchronous
   replication: no acknowledged write lost), and that ingestion resumed. Then restarts
   the killed node's Patroni, which rejoins as a standby (pg_rewind).

    scripts/cluster_up.sh && .venv/bin/python scripts/failover_test.py
Exit status 0 when every check held.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psycopg

from scirag import db
from scirag.ingest.pipeline import Ingester, ingest_manifest

ROOT = Path(__file__).resolve().parents[1]
HA = ROOT / ".cluster"
API_PORT = int(os.environ.get("SCIRAG_HA_API_PORT", "58365"))


def api(port: int, path: str) -> tuple[int, dict | None]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except OSError:
        return 0, None


def leader() -> int | None:
    """The node number (1-3) whose Patroni says it is the primary."""
    for i in (1, 2, 3):
        if api(API_PORT + i - 1, "/primary")[0] == 200:
            return i
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_pg(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=40, help="documents to ingest in all")
    ap.add_argument("--kill-after", type=int, default=8, help="documents acknowledged before the kill")
    ap.add_argument("--timeout", type=float, default=180)
    args = ap.parse_args()
    if not (HA / "dsn").exists():
        print("no cluster: run scripts/cluster_up.sh first", file=sys.stderr)
        return 2
    write_dsn, read_dsn = (HA / "dsn").read_text().splitlines()[:2]
    first = leader()
    if first is None:
        print("no primary in the cluster (patronictl -c .cluster/node1/patroni.yml list)", file=sys.stderr)
        return 2
    run = time.strftime("%Y%m%d%H%M%S")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env.update(SCIRAG_DSN=write_dsn, SCIRAG_READ_DSN=read_dsn, SCIRAG_READ_CONNECT_TIMEOUT="2")
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "scirag"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(HA / f"failover-{run}-server.log", "w"),
    )
    answers: list[tuple[float, bool]] = []
    stop = threading.Event()

    def reader():
        body = json.dumps({"question": "How much straw could Harlan County supply each year?", "k": 5}).encode()
        while not stop.is_set():
            t = time.perf_counter()
            try:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/v1/retrieve", body, {"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(req, timeout=15) as r:
                    ok = r.status == 200 and len(json.loads(r.read())["results"]) > 0
            except Exception:
                ok = False
            answers.append((t, ok))
            time.sleep(0.05)

    for _ in range(200):  # the server is up
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    threading.Thread(target=reader, daemon=True).start()

    from scirag_helpers.embedder import Embedder

    embedder = Embedder(threads=1)
    acked: dict[str, float] = {}
    attempts = retries = 0
    killed_at = first_commit_after = None
    t_end = time.perf_counter() + args.timeout
    folder = Path(tempfile.mkdtemp(prefix="failover-"))
    conn = None
    i = 0
    while i < args.docs and time.perf_counter() < t_end:
        ext = f"failover-{run}-{i:03d}"
        (folder / f"{ext}.md").write_text(
            f"# Failover note {run} {i}\n\nBatch {run} note {i} records {1000 + i} tonnes of pellets "
            f"pressed during failover trial {run}.\n",
            encoding="utf-8",
        )
        manifest = folder / f"{ext}.jsonl"
        manifest.write_text(json.dumps({"id": ext, "path": f"{ext}.md", "license": "public"}) + "\n")
        attempts += 1
        try:
            if conn is None or conn.closed:
                conn = db.connect(write_dsn + " connect_timeout=2", role="scirag_loader")
            counts = ingest_manifest(conn, manifest, Ingester(conn, embedder=embedder))
            if counts["added"] + counts["duplicate"] != 1:
                raise RuntimeError(f"{ext}: {counts}")
            now = time.perf_counter()
            acked[ext] = now
            if killed_at and first_commit_after is None:
                first_commit_after = now
            i += 1
        except (psycopg.Error, RuntimeError) as exc:
            retries += 1
            print(f"  {ext}: {type(exc).__name__}; reconnecting and retrying", file=sys.stderr)
            try:
                if conn is not None:
                    conn.close()
            except Exception:
                pass
            conn = None
            time.sleep(0.5)
            continue
        if i == args.kill_after and killed_at is None:
            node = HA / f"node{first}"
            patroni_pid = int((node / "patroni.pid").read_text())
            postmaster_pid = int((node / "data" / "postmaster.pid").read_text().split()[0])
            killed_at = time.perf_counter()
            os.kill(patroni_pid, signal.SIGKILL)
            os.kill(postmaster_pid, signal.SIGKILL)
            print(f"killed node{first} (Patroni {patroni_pid}, postmaster {postmaster_pid}) after {i} documents")
    stop.set()
    time.sleep(0.2)
    new = leader()
    ok = True
    with psycopg.connect(write_dsn, autocommit=True) as c:
        rows = dict(
            c.execute(
                "SELECT external_id, count(*) FROM scirag.documents WHERE external_id LIKE %s GROUP BY 1",
                (f"failover-{run}-%",),
            ).fetchall()
        )
        # checked: the trial's notes go again (doctor would call them near-duplicates)
        c.execute("DELETE FROM scirag.documents WHERE external_id LIKE %s", (f"failover-{run}-%",))
    lost = sorted(set(acked) - set(rows))
    dup = sorted(k for k, n in rows.items() if n != 1)
    ok &= not lost and not dup and len(acked) == args.docs and new not in (None, first)
    # the server: longest gap between good answers, failed requests after the kill
    good = [t for t, g in answers if g]
    gaps = [b - a for a, b in zip(good, good[1:])]
    failed = sum(1 for t, g in answers if not g)
    after = [t for t in good if killed_at and t > killed_at]
    print(f"primary before: node{first}; after: node{new}")
    if killed_at and first_commit_after:
        print(f"failover: first commit on the new primary {first_commit_after - killed_at:.1f} s after the kill")
    print(
        f"ingestion: {len(acked)}/{args.docs} documents acknowledged, {attempts} attempts, {retries} retried; "
        f"on the new primary: {len(rows)} present, lost {lost or 'none'}, duplicated {dup or 'none'}"
    )
    print(
        f"server: {len(answers)} requests, {failed} failed, longest gap between good answers "
        f"{max(gaps) if gaps else float('nan'):.1f} s, first good answer after the kill "
        f"{(after[0] - killed_at) if after else float('nan'):.1f} s after it"
    )
    ok &= bool(after)
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
    # the killed node rejoins as a standby
    node = HA / f"node{first}"
    subprocess.run(
        as_pg(
            [
                "sh",
                "-c",
                f"nohup patroni '{node}/patroni.yml' > '{node}/patroni.out' 2>&1 & echo $! > '{node}/patroni.pid'",
            ]
        ),
        check=True,
    )
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 120:
        code, state = api(API_PORT + first - 1, "/replica")
        if code == 200:
            print(f"node{first} rejoined as a standby {time.perf_counter() - t0:.1f} s after its restart")
            break
        time.sleep(1)
    else:
        print(f"node{first} has not rejoined within 120 s (see {node}/patroni.out)")
        ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
