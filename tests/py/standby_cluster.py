"""A real hot standby of a running PostgreSQL cluster, for tests and benchmarks.

``start_standby(primary_dsn, name, port)`` copies the primary with ``pg_basebackup -R``
(streaming replication, the primary's own WAL: no home-made replication) into a folder
under the checkout's git-ignored ``.replicas/``, starts it on a unix socket in that
folder (no TCP), waits until it is a hot standby that has replayed the primary's
current WAL, and returns a Standby whose ``stop()`` stops it and removes the folder.
As root, the copy and the server run as the ``postgres`` OS user (initdb's rule).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parents[2]
REPLICAS = ROOT / ".replicas"
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))


def _as_pg(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(_as_pg(cmd), capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")


@dataclass
class Standby:
    name: str
    folder: Path
    port: int
    user: str

    def dsn(self, dbname: str) -> str:
        return make_conninfo(host=str(self.folder), port=str(self.port), user=self.user, dbname=dbname)

    def running(self) -> bool:
        proc = subprocess.run(_as_pg([str(PG_BIN / "pg_ctl"), "-D", str(self.folder), "status"]), capture_output=True)
        return proc.returncode == 0

    def stop(self, mode: str = "fast") -> None:
        if self.folder.exists() and self.running():
            subprocess.run(
                _as_pg([str(PG_BIN / "pg_ctl"), "-D", str(self.folder), "-m", mode, "-w", "stop"]),
                capture_output=True,
                timeout=60,
            )

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


def _parent() -> Path:
    """The folder standbys live in: git-ignored, inside the checkout (whose ancestors
    scripts/db_start.sh made traversable for the postgres OS user)."""
    REPLICAS.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(REPLICAS, "postgres", "postgres")
    return REPLICAS


def start_standby(primary_dsn: str, name: str, port: int, *, timeout: float = 60.0) -> Standby:
    """A streaming hot standby of the cluster primary_dsn points at (see module doc)."""
    params = conninfo_to_dict(primary_dsn)
    host = str(params.get("host") or "/var/run/postgresql")
    pport = str(params.get("port") or "5432")
    user = str(params.get("user") or os.environ.get("PGUSER") or "postgres")
    folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_parent()))
    standby = Standby(name=name, folder=folder, port=port, user=user)
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        os.chmod(folder, 0o700)
        _run(
            [str(PG_BIN / "pg_basebackup"), "-h", host, "-p", pport, "-U", user, "-D", str(folder)]
            + ["-R", "-X", "stream", "-c", "fast", "--no-sync"],
            "pg_basebackup",
        )
        for stale in folder.glob(".s.PGSQL.*"):  # the primary's socket lock file, copied
            stale.unlink(missing_ok=True)
        (folder / "server.log").unlink(missing_ok=True)
        # postgresql.auto.conf wins over the copied postgresql.conf (the primary's socket
        # folder, port and memory); -R wrote primary_conninfo there already.
        with open(folder / "postgresql.auto.conf", "a", encoding="utf-8") as fh:
            fh.write(
                f"\n# scirag test standby {name}\nport = {port}\nunix_socket_directories = '{folder}'\n"
                f"listen_addresses = ''\ncluster_name = '{name}'\nhot_standby = on\n"
                "shared_buffers = 64MB\nfsync = off\n"
            )
        _run(
            [str(PG_BIN / "pg_ctl"), "-D", str(folder), "-l", str(folder / "standby.log"), "-w", "-t", "60", "start"],
            f"starting standby {name}",
        )
        wait_caught_up(primary_dsn, standby.dsn("postgres"), timeout=timeout)
        return standby
    except BaseException:
        standby.remove()
        raise


def wait_caught_up(primary_dsn: str, standby_dsn: str, timeout: float = 60.0) -> float:
    """Seconds until the standby is in recovery and has replayed the primary's current WAL."""
    with psycopg.connect(make_conninfo(primary_dsn, dbname="postgres"), autocommit=True) as p:
        lsn = p.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
    t0 = time.perf_counter()
    while True:
        try:
            with psycopg.connect(standby_dsn, autocommit=True, connect_timeout=2) as s:
                standby, done = s.execute(
                    "SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, false)", (lsn,)
                ).fetchone()
                if standby and done:
                    return time.perf_counter() - t0
        except psycopg.OperationalError:
            pass
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError(f"standby at {standby_dsn!r} did not catch up with {lsn} in {timeout:.0f} s")
        time.sleep(0.05)
