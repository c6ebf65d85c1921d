"""Shared pieces of the server tests (no tests here): start the real `scirag serve` on
a free loopback port against the pytest database, make API keys, talk HTTP, and ask
psql (a scirag_reader connection) for the reference evidence.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_QUESTION = yaml.safe_load((ROOT / "domain" / "questions.yaml").read_text())["sample_question"]
# Answered only by the restricted demo document (saccharification-memo, license restricted).
RESTRICTED_QUESTION = "What HX-40 cellulase loading gave 89.6 % glucan conversion of pretreated corn stover?"
RESTRICTED_DOC = "saccharification-memo"
KEY_PREFIX = "pytest-server-"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Resp:
    status: int
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def http(url: str, method: str = "GET", body=None, headers: dict | None = None, timeout: float = 120) -> Resp:
    data = json.dumps(body).encode() if body is not None else None
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Resp(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as e:
        return Resp(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


class ServerProc:
    """`scirag serve` as a child process; its stderr (all logs) goes to ``log_path``."""

    def __init__(self, dsn: str, log_path: Path, extra_args=()):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scirag.cli", "serve", "--dsn", dsn, "--port", str(self.port), *extra_args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"scirag serve exited {self.proc.returncode}: {self.log()}")
            try:
                if http(self.url + "/healthz", timeout=2).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"scirag serve did not come up: {self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        end_process(self.proc)
        self._log.close()


def drop_test_keys(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM scirag.api_keys WHERE name LIKE %s", (KEY_PREFIX + "%",))


def make_key(dsn: str, suffix: str, role: str = "scirag_reader", **kw) -> str:
    import psycopg

    from scirag.server.keys import add_key

    with psycopg.connect(dsn) as conn:
        return add_key(conn, KEY_PREFIX + suffix, role, **kw)


def psql_evidence(dsn: str, question: str, k: int = 10, role: str = "scirag_reader") -> list[tuple[int, int]]:
    """(rank, chunk_id) as a plain SQL client acting as ``role`` sees them."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"SET ROLE {role}")
        return [
            tuple(r)
            for r in conn.execute("SELECT rank, chunk_id FROM scirag.retrieve(%s, %s)", (question, k)).fetchall()
        ]


def restricted_chunk_ids(dsn: str) -> set[int]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:  # superuser: sees every row
        return {
            r[0]
            for r in conn.execute(
                "SELECT c.id FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id "
                "WHERE d.license = 'restricted'"
            ).fetchall()
        }


@pytest.fixture(scope="session")
def server_keys(dsn, demo_corpus):
    """Keys for the server tests (made before the server starts, so it requires keys)."""
    drop_test_keys(dsn)
    keys = {
        "reader": make_key(dsn, "reader", rate_per_minute=100000),
        "byo": make_key(dsn, "byo", byo_llm=True, rate_per_minute=100000),
        "loader": make_key(dsn, "loader", role="scirag_loader", rate_per_minute=100000),
        "slow": make_key(dsn, "slow", rate_per_minute=3),
    }
    yield keys
    drop_test_keys(dsn)


@pytest.fixture(scope="session")
def server(dsn, server_keys, tmp_path_factory):
    srv = ServerProc(dsn, tmp_path_factory.mktemp("server") / "serve.log")
    yield srv
    srv.stop()


def end_process(proc: subprocess.Popen) -> None:
    """Terminates a child process, then kills it if it has not gone within 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
