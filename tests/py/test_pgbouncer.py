"""The server's service through pgbouncer in transaction pooling (issue 27).

A real pgbouncer (Debian's 1.18, scripts/install_system.sh installs it) is started on a
unix socket in front of the test cluster with ONE server connection per database, so
every client below shares the same backend. Scope is transaction-local
(set_config(..., true) = SET LOCAL inside BEGIN ... COMMIT), so it cannot follow a
server connection to the next client; a session-level SET does (shown first, so the
test proves the connection really is shared). The service also sends no server-side
prepared statements (pgbouncer 1.18 cannot keep them in this mode) and drops its
session-level trace inside the transaction.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from scirag.server.keys import Identity
from scirag.server.service import Scope, Service

from standby_cluster import REPLICAS, _as_pg, _parent

QUESTION = "How much straw could Harlan County supply each year?"
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


@pytest.fixture(scope="module")
def bouncer(dsn, demo_corpus):
    """pgbouncer (pool_mode = transaction, default_pool_size = 1) in front of the test
    cluster; returns the DSN of the test database through it. Stopped at the end."""
    assert os.path.exists(PGBOUNCER), "pgbouncer is not installed: run scripts/install_system.sh"
    params = conninfo_to_dict(dsn)
    port = int(os.environ.get("SCIRAG_PGBOUNCER_PORT") or int(params.get("port") or 5432) + 2)
    folder = Path(tempfile.mkdtemp(prefix="pgbouncer-", dir=_parent()))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    (folder / "userlist.txt").write_text('"postgres" ""\n', encoding="utf-8")
    (folder / "pgbouncer.ini").write_text(
        f"""[databases]
* = host={params.get("host")} port={params.get("port") or 5432}

[pgbouncer]
listen_addr =
listen_port = {port}
unix_socket_dir = {folder}
auth_type = trust
auth_file = {folder}/userlist.txt
pool_mode = transaction
default_pool_size = 1
max_client_conn = 50
server_reset_query =
query_wait_timeout = 5
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
""",
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        _as_pg([PGBOUNCER, "-q", str(folder / "pgbouncer.ini")]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    through = make_conninfo(host=str(folder), port=str(port), user="postgres", dbname=params["dbname"])
    try:
        for _ in range(100):
            try:
                psycopg.connect(through, connect_timeout=1).close()
                break
            except psycopg.OperationalError:
                if proc.poll() is not None:
                    log = (folder / "pgbouncer.log").read_text(errors="replace")[-800:]
                    raise RuntimeError(f"pgbouncer exited: {log}") from None
                time.sleep(0.05)
        yield through
    finally:
        for line in unusual_log_lines(folder / "pgbouncer.log"):
            print("pgbouncer:", line)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)
        assert folder.parent == REPLICAS


def unusual_log_lines(log: Path) -> list[str]:
    """What pgbouncer logged besides logins and clients leaving on their own (a client
    dropped for query_wait_timeout shows here)."""
    routine = ("login attempt", "client close request", "new connection to server", "registered new auto-database")
    text = log.read_text(errors="replace") if log.exists() else ""
    return [line for line in text.splitlines() if "C-0x" in line and not any(r in line for r in routine)]


def backend(conn) -> int:
    return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def test_one_pooled_server_connection_carries_a_session_set_but_never_a_set_local(bouncer):
    with psycopg.connect(bouncer, autocommit=True) as a, psycopg.connect(bouncer, autocommit=True) as b:
        assert backend(a) == backend(b)  # two clients, one server connection
        # the wrong way: a session-level setting stays on the server connection...
        a.execute("SELECT set_config('scirag.licenses', 'restricted', false)")
        assert b.execute("SELECT current_setting('scirag.licenses', true)").fetchone()[0] == "restricted"
        b.execute("RESET ALL")
        reset_value = b.execute("SELECT current_setting('scirag.licenses', true)").fetchone()[0]
        assert reset_value not in ("restricted", "public", "open_commercial")
        # ... the right way: SET LOCAL inside a transaction ends with it
        for client, licenses in ((a, "public"), (b, "open_commercial"), (a, "public")):
            with client.transaction():
                client.execute("SELECT set_config('role', 'scirag_reader', true)")
                client.execute("SELECT set_config('scirag.licenses', %s, true)", (licenses,))
                scope = client.execute("SELECT scirag.current_scope()").fetchone()[0]
                assert scope["licenses"] == [licenses]
            other = b if client is a else a
            value, user = other.execute("SELECT current_setting('scirag.licenses', true), current_user").fetchone()
            assert user == "postgres" and value == reset_value  # nothing of the other client's call


def test_two_callers_with_different_scopes_interleaved_through_one_pooled_connection(dsn, bouncer):
    """Two services (two client pools) through pgbouncer's single server connection,
    their calls interleaved: each sees exactly its own scope and its own rows, nothing
    of the other's call (scope, role, trace) is left behind, and repeated statements
    do not trip over server-side prepared statements."""
    me = Identity(name="t", role="scirag_reader", byo_llm=False, rate_per_minute=None)
    narrow = Scope(licenses=["open_commercial"])

    async def main():
        direct = Service(dsn, read_dsn=dsn, min_size=1, max_size=1)
        x = Service(bouncer, read_dsn=bouncer, min_size=1, max_size=2)
        y = Service(bouncer, read_dsn=bouncer, min_size=1, max_size=2)
        for s in (direct, x, y):
            await s.open()
        try:
            want_wide = await direct.retrieve(me, QUESTION, k=10)
            want_narrow = await direct.retrieve(me, QUESTION, k=10, scope=narrow)
            calls = []
            for _ in range(8):  # > psycopg's prepare threshold (5)
                calls += [
                    x.current_scope(me, narrow),
                    y.current_scope(me),
                    x.retrieve(me, QUESTION, k=10, scope=narrow),
                    y.retrieve(me, QUESTION, k=10),
                ]
            got = await asyncio.gather(*calls)
            left = await y.run(
                me, [("SELECT scirag.last_trace() AS t, current_setting('scirag.licenses', true) AS l", None)]
            )
            return want_wide, want_narrow, got, left
        finally:
            for s in (direct, x, y):
                await s.close()

    want_wide, want_narrow, got, left = asyncio.run(main())
    assert [r["chunk_id"] for r in want_wide["results"]] != [r["chunk_id"] for r in want_narrow["results"]]
    for i in range(0, len(got), 4):
        scope_x, scope_y, rows_x, rows_y = got[i : i + 4]
        assert scope_x["licenses"] == ["open_commercial"]
        assert sorted(scope_y["licenses"]) == ["open_commercial", "public"]
        assert rows_x["results"] == want_narrow["results"]
        assert rows_y["results"] == want_wide["results"]
    [[row]] = left
    assert row["t"] is None and row["l"] in ("", None, "default")  # no other caller's trace or scope


def test_a_call_leaves_nothing_behind_that_ties_the_one_server_connection_to_its_client(bouncer):
    """Many calls in a row, alternating between two services' clients over pgbouncer's one
    server connection. Each call's last message must end its transaction: anything sent
    after COMMIT (psycopg sends a Sync and a Flush when it leaves a pipeline) reaches
    pgbouncer after it released the server connection, and a Flush, which the server
    answers with nothing, leaves that connection tied to an idle client, so the other
    client waits until query_wait_timeout (5 s here) drops it. Before COMMIT was moved
    out of the pipeline this failed within about 50 rounds."""
    me = Identity(name="t", role="scirag_reader", byo_llm=False, rate_per_minute=None)

    async def main():
        x = Service(bouncer, read_dsn=bouncer, min_size=1, max_size=1)
        y = Service(bouncer, read_dsn=bouncer, min_size=1, max_size=1)
        for s in (x, y):
            await s.open()
        try:
            slowest = 0.0
            for _ in range(300):
                for s in (x, y):
                    started = time.perf_counter()
                    [[row]] = await s.run(me, [("SELECT current_user AS u", None)])
                    assert row["u"] == "scirag_reader"
                    slowest = max(slowest, time.perf_counter() - started)
            return slowest
        finally:
            for s in (x, y):
                await s.close()

    slowest = asyncio.run(main())
    assert slowest < 4.0, f"a call waited {slowest:.1f} s for pgbouncer's server connection"
