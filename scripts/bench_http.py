#!/usr/bin/env python3
"""Overhead of the HTTP door over the SQL call, and a bounded load test (loopback only).

  .venv/bin/python scripts/bench_http.py [--dsn DSN] [--rounds 200] [--clients 20] [--seconds 30]

Needs a database with the demo corpus (scripts/demo.sh loads it into `scirag`). The
script makes a temporary reader key, starts `scirag serve` on a free 127.0.0.1 port,
and deletes the key afterwards.

1. Overhead: for each of the demo's seed questions in turn (made unique per pair, so
   neither path hits a per-backend embedding cache), the same call twice, order
   alternating: `SELECT * FROM scirag.retrieve(q, k)` on a direct connection acting as
   scirag_reader (what psql does), and POST /v1/retrieve over one keep-alive HTTP
   connection. Also GET /v1/scope against `SELECT scirag.current_scope()` (a call whose
   SQL costs almost nothing). Prints p50/p95 of each and the p50 of the per-pair
   difference (HTTP minus SQL): the door's overhead (target p50 <= 5 ms). The row
   "in-proc" calls the same app as ASGI inside this process (no sockets, no uvicorn,
   no extra process to wake): what the app and the service layer add by themselves.
   The server process's own CPU time per HTTP request (from /proc) is printed too:
   unlike wall-clock differences it does not depend on what else runs on the machine.
2. Load: ``--clients`` threads, each with its own keep-alive connection, POST
   /v1/retrieve for ``--seconds`` seconds; prints requests, errors, throughput and
   latency percentiles (target: 0 errors).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python" / "loader"), str(ROOT / "python" / "plpy_helpers")]

from scirag import db  # noqa: E402
from scirag.server.keys import add_key  # noqa: E402

KEY_NAME = "bench-http"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port, key):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def request(self, method, path, body=None):
        # bytes, so headers and body leave in one send (a str body is a second send, and
        # Nagle + delayed ACK then add ~40 ms to every POST)
        payload = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=payload, headers=self.headers)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, data


async def in_process(dsn, key, questions, rounds, k):
    """POST /v1/retrieve through the ASGI app in this process (no sockets, no uvicorn)
    against the same call on a direct async connection: what the app itself adds."""
    from scirag.server.app import create_app

    app = create_app(dsn)
    await app.app.state.service.open()
    sql = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    await sql.execute("SET ROLE scirag_reader")

    async def asgi(q):
        body = json.dumps({"question": q, "k": k}).encode()
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/v1/retrieve",
            "raw_path": b"/v1/retrieve",
            "query_string": b"",
            "http_version": "1.1",
            "scheme": "http",
            "root_path": "",
            "server": ("127.0.0.1", 80),
            "client": ("127.0.0.1", 1),
            "state": {},
            "headers": [
                (b"host", b"127.0.0.1"),
                (b"content-type", b"application/json"),
                (b"authorization", f"Bearer {key}".encode()),
            ],
        }
        out = []

        async def receive():
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(m):
            out.append(m)

        await app(scope, receive, send)
        assert out[0]["status"] == 200, out

    async def direct(q):
        await (await sql.execute("SELECT * FROM scirag.retrieve(%s, %s)", (q, k))).fetchall()

    for q in questions[:5]:
        await asgi(q), await direct(q)
    s_ms, a_ms, diff = [], [], []
    for i in range(rounds):
        q = f"{questions[i % len(questions)]} (asgi {i})"
        pair = [(direct, s_ms), (asgi, a_ms)] if i % 2 else [(asgi, a_ms), (direct, s_ms)]
        t = {}
        for fn, acc in pair:
            t0 = time.perf_counter()
            await fn(q)
            acc.append((time.perf_counter() - t0) * 1000)
            t[fn] = acc[-1]
        diff.append(t[asgi] - t[direct])
    await sql.close()
    await app.app.state.service.close()
    return s_ms, a_ms, diff


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dsn", default=None, help="database with the demo corpus (default: SCIRAG_DSN or the project db)")
    ap.add_argument("--rounds", type=int, default=200, help="pairs per measurement in part 1")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--pool-size", type=int, default=10, help="connections per role in the server")
    args = ap.parse_args()
    if not (1 <= args.clients <= 64 and 1 <= args.seconds <= 120 and 1 <= args.rounds <= 5000):
        ap.error("bounded: 1-64 clients, 1-120 seconds, 1-5000 rounds")
    dsn = args.dsn or db.default_dsn()
    questions = [q["question"] for q in yaml.safe_load((ROOT / "domain" / "questions.yaml").read_text())["questions"]]

    with psycopg.connect(dsn) as conn:
        conn.execute("DELETE FROM scirag.api_keys WHERE name = %s", (KEY_NAME,))
        conn.commit()
        key = add_key(conn, KEY_NAME, "scirag_reader", rate_per_minute=1_000_000, note="scripts/bench_http.py")
    port = free_port()
    log = open(os.environ.get("BENCH_HTTP_LOG", "/tmp/bench_http_server.log"), "wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scirag.cli",
            "serve",
            "--dsn",
            dsn,
            "--port",
            str(port),
            "--pool-size",
            str(args.pool_size),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if Client(port, key).request("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"server did not start (see {log.name})")
            time.sleep(0.2)

        # warm every pooled backend (each loads the embedding model once)
        def warm():
            c = Client(port, key)
            for q in questions[:3]:
                c.request("POST", "/v1/retrieve", {"question": q, "k": args.k})

        ts = [threading.Thread(target=warm) for _ in range(args.clients)]
        [t.start() for t in ts]
        [t.join() for t in ts]

        # -- part 1: overhead ------------------------------------------------
        sql = psycopg.connect(dsn, autocommit=True)
        sql.execute("SET ROLE scirag_reader")
        for q in questions:  # warm this backend too
            sql.execute("SELECT * FROM scirag.retrieve(%s, %s)", (q, args.k)).fetchall()
        web = Client(port, key)

        def timed(fn):
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1000

        def sql_retrieve(q):
            return lambda: sql.execute("SELECT * FROM scirag.retrieve(%s, %s)", (q, args.k)).fetchall()

        def http_retrieve(q):
            def f():
                status, body = web.request("POST", "/v1/retrieve", {"question": q, "k": args.k})
                assert status == 200, body[:200]
                json.loads(body)

            return f

        def sql_scope():
            sql.execute("SELECT scirag.current_scope()").fetchone()

        def http_scope():
            status, body = web.request("GET", "/v1/scope")
            assert status == 200, body[:200]

        def server_cpu_ms() -> float:
            """utime + stime of the server process (it serves only this loop in part 1)."""
            fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

        results, cpu = {}, {}
        for name, make_sql, make_http in (
            ("retrieve", sql_retrieve, http_retrieve),
            ("scope", lambda q: sql_scope, lambda q: http_scope),
        ):
            s_ms, h_ms, diff = [], [], []
            cpu0 = server_cpu_ms()
            for i in range(args.rounds):
                # a text neither backend has embedded yet: the in-database query-embedding
                # cache is per backend, and the two paths use different backends
                q = f"{questions[i % len(questions)]} (run {i})"
                if i % 2:
                    h, s = timed(make_http(q)), timed(make_sql(q))
                else:
                    s, h = timed(make_sql(q)), timed(make_http(q))
                s_ms.append(s), h_ms.append(h), diff.append(h - s)
            results[name] = (s_ms, h_ms, diff)
            cpu[name] = (server_cpu_ms() - cpu0) / args.rounds
        sql.close()

        inproc = asyncio.run(in_process(dsn, key, questions, args.rounds, args.k))

        print(f"part 1: overhead, {args.rounds} pairs each, k={args.k}, {len(questions)} seed questions (ms)")
        print(
            f"{'call':<10} {'SQL p50':>9} {'SQL p95':>9} {'HTTP p50':>9} {'HTTP p95':>9} {'overhead p50':>13} "
            f"{'p50 diff':>9}"
        )
        for name, (s_ms, h_ms, diff) in results.items():
            print(
                f"{name:<10} {pct(s_ms, 50):9.2f} {pct(s_ms, 95):9.2f} {pct(h_ms, 50):9.2f} {pct(h_ms, 95):9.2f} "
                f"{pct(h_ms, 50) - pct(s_ms, 50):13.2f} {statistics.median(diff):9.2f}"
            )

        s_ms, a_ms, diff = inproc
        print(
            f"{'in-proc':<10} {pct(s_ms, 50):9.2f} {pct(s_ms, 95):9.2f} {pct(a_ms, 50):9.2f} {pct(a_ms, 95):9.2f} "
            f"{pct(a_ms, 50) - pct(s_ms, 50):13.2f} {statistics.median(diff):9.2f}   (retrieve: the app called "
            f"as ASGI in this process vs SQL: the door without sockets)"
        )
        print(
            "server process CPU per HTTP request (ms; load-independent): "
            + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
        )
        print(f"load average during part 1: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")

        # -- part 2: load ----------------------------------------------------
        stop = time.monotonic() + args.seconds
        lat, errors, lock = [], [], threading.Lock()

        def worker(n):
            c = Client(port, key)
            i = n
            while time.monotonic() < stop:
                q = questions[i % len(questions)]
                i += 1
                t0 = time.perf_counter()
                try:
                    status, body = c.request("POST", "/v1/retrieve", {"question": q, "k": args.k})
                    ok = status == 200
                except Exception as exc:  # counted, reported
                    ok, status = False, repr(exc)
                    c = Client(port, key)
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    (lat.append(ms) if ok else errors.append(status))

        t0 = time.monotonic()
        ts = [threading.Thread(target=worker, args=(n,)) for n in range(args.clients)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        wall = time.monotonic() - t0
        print(f"\npart 2: load, {args.clients} concurrent clients, {wall:.1f} s, POST /v1/retrieve")
        print(
            f"requests {len(lat) + len(errors)}  errors {len(errors)}  throughput {len(lat) / wall:.1f}/s  "
            f"latency p50 {pct(lat, 50):.1f} ms  p95 {pct(lat, 95):.1f} ms  max {max(lat):.1f} ms"
        )
        if errors:
            print("errors:", errors[:10])
        ok = pct(results["retrieve"][1], 50) - pct(results["retrieve"][0], 50) <= 5 and not errors
        print("\ntargets (overhead p50 <= 5 ms, 0 errors):", "met" if ok else "NOT met")
        return 0 if ok else 1
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        with psycopg.connect(dsn) as conn:
            conn.execute("DELETE FROM scirag.api_keys WHERE name = %s", (KEY_NAME,))


if __name__ == "__main__":
    sys.exit(main())
