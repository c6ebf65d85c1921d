"""statement_timeout and pg_cancel_backend stop a running scirag statement (issue 16
item 6): the statement ends with QueryCanceled within a bound although it had far
more work left, and the backend is free for the next statement at once. A test that
only saw a layer's result dropped after it had finished would prove neither.

The long statement runs scirag.retrieve (SQL, PL/Python embedding, both layers) once
per row of a series sized from the measured time of one call, so that uncancelled it
would run for about 20 minutes."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

LONG = "SELECT count(*) FROM generate_series(1, %s) g, LATERAL scirag.retrieve('straw yield in county ' || g, 5) r"
BOUND_S = 10.0  # the timeout plus the call in flight plus a loaded machine


def long_rows(conn) -> int:
    """Rows that keep the uncancelled statement running for 120 bounds (20 minutes),
    from the measured time of one call."""
    t0 = time.monotonic()
    conn.execute(LONG, (20,)).fetchone()
    per_call = (time.monotonic() - t0) / 20
    return max(1000, int(120 * BOUND_S / per_call))


def backend_state(admin_conn, pid: int) -> str:
    return admin_conn.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]


def test_statement_timeout_stops_a_long_retrieve_statement_and_frees_the_backend(reader_conn, admin_conn, demo_corpus):
    rows = long_rows(reader_conn)
    reader_conn.execute("SET statement_timeout = '500ms'")
    t0 = time.monotonic()
    with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
        reader_conn.execute(LONG, (rows,)).fetchone()
    assert time.monotonic() - t0 < BOUND_S
    pid = reader_conn.info.backend_pid
    assert backend_state(admin_conn, pid) == "idle"  # nothing runs on in the background
    reader_conn.execute("RESET statement_timeout")
    t1 = time.monotonic()
    assert reader_conn.execute("SELECT count(*) FROM scirag.retrieve('straw yield', 3)").fetchone()[0] == 3
    assert time.monotonic() - t1 < BOUND_S  # the same backend answers at once


def test_cancel_from_another_session_stops_the_statement(reader_conn, admin_conn, demo_corpus):
    pid = reader_conn.info.backend_pid
    rows = long_rows(reader_conn)
    outcome: dict = {}

    def run():
        t0 = time.monotonic()
        try:
            reader_conn.execute(LONG, (rows,)).fetchone()
            outcome["result"] = "finished"
        except psycopg.Error as exc:
            outcome["result"] = type(exc).__name__
        outcome["seconds"] = time.monotonic() - t0

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + BOUND_S
    while backend_state(admin_conn, pid) != "active":  # the statement has started
        assert time.monotonic() < deadline, "the long statement never started"
        time.sleep(0.05)
    time.sleep(1.0)
    assert admin_conn.execute("SELECT pg_cancel_backend(%s)", (pid,)).fetchone()[0]
    worker.join(BOUND_S)
    assert not worker.is_alive(), "the cancelled statement is still running"
    assert outcome["result"] == "QueryCanceled"
    assert outcome["seconds"] < 1.0 + BOUND_S
    assert backend_state(admin_conn, pid) == "idle"
    assert reader_conn.execute("SELECT 1").fetchone()[0] == 1
