"""Where a connection goes: writes to the primary, reads to hot standbys.

The primary is SCIRAG_DSN (else the PG* variables or the project cluster, as
``db.default_dsn``); the standbys are SCIRAG_READ_DSN, one libpq connection string
that may list several hosts (``host=a,b port=5433,5434``; with
``target_session_attrs=prefer-standby`` psycopg tries every host as a standby first).
A list of several hosts is load-balanced (``load_balance_hosts=random``) unless the
DSN says otherwise. When no read node answers, reads fall back to the primary; when
SCIRAG_READ_DSN is unset, everything goes to the primary, as before.

Only reads are routed: ingest, enrich, keys, presets, graph builds and eval rows
always go to the primary. A reader's scope is the same on every node, because it is
made of session settings (scirag.licenses, ...) evaluated by the node that runs the
query against role ceilings that replicate like any other row.

Nothing a reader path runs writes (a write on a standby fails with SQLSTATE 25006,
"cannot execute ... in a read-only transaction"); a code path that would write beside
a read (a stamp, a counter, a cache row) asks ``read_only(conn)`` first and skips or
routes the write to the primary.
"""

from __future__ import annotations

import os
import time
from contextlib import suppress

import psycopg
import typer
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from scirag import db

READ_DSN_ENV = "SCIRAG_READ_DSN"
# A read node that does not answer within this many seconds is skipped (libpq's
# connect_timeout; a socket that is gone fails at once).
CONNECT_TIMEOUT = int(os.environ.get("SCIRAG_READ_CONNECT_TIMEOUT", "3"))
_SERVER_KEYS = ("host", "hostaddr", "port")


class RoutingError(typer.BadParameter):
    """A connection cannot be routed as asked; the message says why (a typer error,
    so the CLI prints it as one line instead of a traceback)."""


def primary_dsn(dsn: str | None = None) -> str:
    """Where writes go: an explicit --dsn, else SCIRAG_DSN / PG* / the project cluster."""
    return dsn or db.default_dsn()


def _server(dsn: str) -> tuple:
    p = conninfo_to_dict(dsn)
    return tuple(str(p.get(k, "")) for k in _SERVER_KEYS)


def read_dsn(dsn: str | None = None) -> str | None:
    """The standbys' DSN for a read against ``dsn`` (the primary when None), with that
    DSN's database; None when reads stay where ``dsn`` points (no SCIRAG_READ_DSN, or an
    explicit DSN that names another server than the primary: it is taken as given)."""
    raw = os.environ.get(READ_DSN_ENV, "").strip()
    if not raw:
        return None
    try:
        params = conninfo_to_dict(raw)
    except psycopg.ProgrammingError as exc:
        raise RoutingError(f"{READ_DSN_ENV} is not a libpq connection string: {str(exc).strip()}") from None
    if dsn is not None and _server(dsn) != _server(db.default_dsn()):
        return None
    target = conninfo_to_dict(dsn or db.default_dsn())
    extra = {"dbname": target.get("dbname") or params.get("dbname") or db.DEFAULT_DB}
    if "connect_timeout" not in params:
        extra["connect_timeout"] = CONNECT_TIMEOUT
    if "," in str(params.get("host", "")) and "load_balance_hosts" not in params:
        extra["load_balance_hosts"] = "random"  # spread readers over the standbys
    return make_conninfo(raw, **extra)


def read_candidates(dsn: str | None = None) -> list[str]:
    """Conninfos a reader tries in order: the standbys (one multi-host DSN), then the primary."""
    standby = read_dsn(dsn)
    primary = primary_dsn(dsn)
    return [standby, primary] if standby else [primary]


def connect_reader(dsn: str | None = None, role: str | None = None, autocommit: bool = False) -> psycopg.Connection:
    """``db.connect`` for a read path (retrieve, ask, eval reads): a standby when one
    answers, else the primary; the role switch and scope settings are the same on any node."""
    last = None
    for conninfo in read_candidates(dsn):
        try:
            return db.connect(conninfo, role=role, autocommit=autocommit)
        except psycopg.OperationalError as exc:
            last = exc
    raise last


def connect_writer(dsn: str | None = None, role: str | None = None, autocommit: bool = False) -> psycopg.Connection:
    """``db.connect`` for a write path, on the primary. A DSN that names a hot standby is
    refused with a one-line error (every write there fails with SQLSTATE 25006)."""
    conn = db.connect(primary_dsn(dsn), role=role, autocommit=autocommit)
    if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
        conn.close()
        raise RoutingError(
            "the database named for writing is a hot standby (read-only): point SCIRAG_DSN (or --dsn) "
            f"at the primary and list standbys in {READ_DSN_ENV}"
        )
    if not autocommit:
        conn.commit()
    return conn


def read_only(conn) -> bool:
    """True when this session cannot write: a hot standby, or default_transaction_read_only
    (a read-only pooler user, or target_session_attrs=read-only)."""
    row = conn.execute("SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::bool").fetchone()
    return bool(row[0] if not isinstance(row, dict) else next(iter(row.values())))


def fallback_connection_class(candidates: list[str], base=psycopg.AsyncConnection):
    """An AsyncConnection class for psycopg_pool whose connect() tries ``candidates`` in
    order (the pool's own conninfo is ignored): the pool of a read path keeps serving from
    the primary while every standby is down, and from a standby while the primary is."""

    class RoutedAsyncConnection(base):
        @classmethod
        async def connect(cls, conninfo: str = "", **kwargs):
            last = None
            for target in candidates:
                try:
                    return await super().connect(target, **kwargs)
                except psycopg.OperationalError as exc:
                    last = exc
            raise last

    return RoutedAsyncConnection


# ---------------------------------------------------------------------------
# Replica lag (scirag doctor, /healthz)
# ---------------------------------------------------------------------------

# On the primary: every attached standby and how far its replay is behind, in bytes of
# WAL (exact, also when idle) and in seconds (replay_lag: measured by the primary while
# WAL flows; NULL once an idle standby has caught up, reported as 0 then).
PRIMARY_SQL = """SELECT application_name AS name, state, sync_state,
                        pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint AS replay_lag_bytes,
                        coalesce(extract(epoch FROM replay_lag), 0)::float8 AS replay_lag_seconds
                 FROM pg_stat_replication ORDER BY application_name"""
# On a read node: what it is, and its own view of the lag. Its name is the one the
# primary lists it under: the application_name of its primary_conninfo (Patroni sets
# it; readable by superusers and pg_read_all_settings), else its cluster_name.
NODE_SQL = """SELECT pg_is_in_recovery() AS standby,
                     coalesce(CASE WHEN pg_has_role('pg_read_all_settings', 'MEMBER') THEN substring(
                                current_setting('primary_conninfo', true) FROM 'application_name=''?([A-Za-z0-9_.-]+)')
                              END, nullif(current_setting('cluster_name'), '')) AS name,
                     CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text
                          ELSE pg_current_wal_lsn()::text END AS lsn,
                     pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint
                       AS received_not_replayed_bytes"""


def _hosts(dsn: str) -> list[str]:
    """One single-host conninfo per host of a (multi-host) DSN."""
    params = conninfo_to_dict(dsn)
    hosts = str(params.get("host", "")).split(",")
    ports = str(params.get("port", "")).split(",")
    if len(ports) == 1:
        ports = ports * len(hosts)
    out = []
    for h, p in zip(hosts, ports):
        single = {k: v for k, v in params.items() if k not in ("host", "port", "load_balance_hosts")}
        single.update({"host": h, "port": p, "target_session_attrs": "any"})
        single.setdefault("connect_timeout", CONNECT_TIMEOUT)
        out.append(make_conninfo(**{k: v for k, v in single.items() if v not in ("", None)}))
    return out


def replica_status(dsn: str | None = None, *, standby_dsn: str | None = None, with_hosts: bool = False) -> dict:
    """The primary's view of its standbys, and each read node of SCIRAG_READ_DSN.

    ``{"primary": {"reachable", "standby", "lsn"}, "standbys": [{"name", "state",
    "sync_state", "replay_lag_bytes", "replay_lag_seconds"}], "read_nodes": [{"name",
    "reachable", "standby", "replay_lag_bytes"}]}``. Names are the standbys'
    application_name (their cluster_name); hosts are listed only with ``with_hosts``
    (an admin's doctor report, never the unauthenticated /healthz)."""
    out: dict = {"primary": {"reachable": False}, "standbys": [], "read_nodes": []}
    primary_lsn = None
    try:
        with psycopg.connect(primary_dsn(dsn), connect_timeout=CONNECT_TIMEOUT, autocommit=True) as conn:
            standby, lsn = conn.execute(
                "SELECT pg_is_in_recovery(), CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                "ELSE pg_current_wal_lsn() END::text"
            ).fetchone()
            out["primary"] = {"reachable": True, "standby": standby, "lsn": lsn}
            primary_lsn = None if standby else lsn
            if not standby:
                cur = conn.execute(PRIMARY_SQL)
                cols = [d.name for d in cur.description]
                out["standbys"] = [dict(zip(cols, r)) for r in cur.fetchall()]
    except psycopg.Error as exc:
        out["primary"]["error"] = type(exc).__name__
    standby_dsn = standby_dsn or read_dsn(dsn)
    for i, node in enumerate(_hosts(standby_dsn) if standby_dsn else []):
        entry: dict = {"name": f"read[{i}]", "reachable": False}
        if with_hosts:
            entry["host"] = f"{conninfo_to_dict(node).get('host')}:{conninfo_to_dict(node).get('port', '')}"
        try:
            with psycopg.connect(node, autocommit=True) as conn:
                row = conn.execute(NODE_SQL).fetchone()
                entry.update(reachable=True, standby=row[0], name=row[1] or entry["name"], lsn=row[2])
                entry["received_not_replayed_bytes"] = row[3]
                if primary_lsn and row[0]:
                    entry["replay_lag_bytes"] = conn.execute(
                        "SELECT greatest(pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint",
                        (primary_lsn,),
                    ).fetchone()[0]
        except psycopg.Error as exc:
            entry["error"] = type(exc).__name__
        out["read_nodes"].append(entry)
    return out


class StatusCache:
    """replica_status() at most every ``seconds`` (/healthz needs no key: a flood of
    health checks must not become a flood of connections to every node)."""

    def __init__(self, dsn: str | None, read_dsn: str | None = None, seconds: float = 2.0):
        self.dsn, self.read_dsn, self.seconds = dsn, read_dsn, seconds
        self._at, self._value = 0.0, None

    def get(self) -> dict:
        now = time.monotonic()
        if self._value is None or now - self._at >= self.seconds:
            with suppress(Exception):
                self._value = replica_status(self.dsn, standby_dsn=self.read_dsn)
            self._at = now
        return self._value or {"primary": {"reachable": False}, "standbys": [], "read_nodes": []}


def wait_for_replay(standby_dsn: str, lsn: str, timeout: float = 30.0) -> float:
    """Seconds until the standby has replayed ``lsn`` (a primary's pg_current_wal_lsn()
    after a commit); raises TimeoutError past ``timeout``."""
    t0 = time.perf_counter()
    with psycopg.connect(standby_dsn, autocommit=True) as conn:
        while True:
            done = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0]
            if done:
                return time.perf_counter() - t0
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"standby has not replayed {lsn} after {timeout:.0f} s")
            time.sleep(0.005)
