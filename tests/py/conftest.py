"""Shared fixtures for the scirag pytest suites.

Database tests run against their own database, ``scirag_pytest``, derived from
SCIRAG_TEST_DSN (scripts/test.sh sets it): dropped and re-deployed once per
session, so neither the demo database ``scirag`` nor the pgTAP database is touched.
Without SCIRAG_TEST_DSN the project cluster is used; if no server is reachable the
database tests fail with a message that says how to start one (they never skip).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from areas import pytest_collection_modifyitems, pytest_configure  # hooks: a marker per area (tests/py/areas.py)

ROOT = Path(__file__).resolve().parents[2]
DEMO_MANIFEST = ROOT / "domain" / "demo" / "manifest.jsonl"
# SCIRAG_PYTEST_DB lets two runs share one cluster without dropping each other's database.
PYTEST_DB = os.environ.get("SCIRAG_PYTEST_DB", "scirag_pytest")


# ---------------------------------------------------------------------------
# Manifests
# ---------------------------------------------------------------------------


def write_manifest(folder: Path, lines, files: dict | None = None, name: str = "manifest.jsonl") -> Path:
    """Writes files (name -> str or bytes) and a JSONL manifest into folder.

    Each item of ``lines`` is a dict (written as one JSON line) or a str (written
    verbatim, for deliberately broken lines)."""
    folder.mkdir(parents=True, exist_ok=True)
    for fname, content in (files or {}).items():
        target = folder / fname
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    manifest = folder / name
    with open(manifest, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    return manifest


@pytest.fixture
def make_manifest(tmp_path):
    """make_manifest(lines, files=None, name='manifest.jsonl') -> Path, inside tmp_path."""

    def _make(lines, files=None, name="manifest.jsonl"):
        return write_manifest(tmp_path, lines, files, name)

    return _make


# ---------------------------------------------------------------------------
# The embedding model (one instance per session: loading takes ~0.5 s)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def embedder():
    from scirag_helpers.embedder import Embedder

    return Embedder(threads=2)


# ---------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def base_dsn():
    """SCIRAG_TEST_DSN (scripts/test.sh sets it), else the project cluster (or SCIRAG_DSN/PG*).

    A database test never skips silently: without a reachable server it fails and says
    how to get one."""
    import psycopg
    from scirag import db

    dsn = os.environ.get("SCIRAG_TEST_DSN") or db.default_dsn("postgres")
    try:
        psycopg.connect(dsn, connect_timeout=5).close()
    except psycopg.Error as exc:
        pytest.fail(
            f"no PostgreSQL for the database tests at {dsn!r} ({str(exc).strip()}): run "
            "scripts/test.sh, or start the project cluster with scripts/setup.sh, or set "
            "SCIRAG_TEST_DSN to a server with pgvector and plpython3u",
            pytrace=False,
        )
    return dsn


@pytest.fixture(scope="session")
def dsn(base_dsn):
    """DSN of a freshly created and deployed scirag_pytest database."""
    import psycopg
    from scirag import db

    target = db.with_dbname(base_dsn, PYTEST_DB)
    with psycopg.connect(db.with_dbname(base_dsn, "postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{PYTEST_DB}" WITH (FORCE)')
    db.init_db(target)
    return target


@pytest.fixture(scope="session")
def demo_corpus(dsn, embedder):
    """The demo manifest ingested once into scirag_pytest (as the loader role).

    Returns the counts ingest_manifest returned."""
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    with db.connect(dsn, role="scirag_loader") as conn:
        counts = ingest_manifest(conn, DEMO_MANIFEST, Ingester(conn, embedder=embedder))
    return counts


@pytest.fixture
def loader_conn(dsn):
    from scirag import db

    conn = db.connect(dsn, role="scirag_loader")
    yield conn
    conn.close()


@pytest.fixture
def reader_conn(dsn):
    """An autocommit connection acting as scirag_reader (row-level security applies)."""
    from scirag import db

    conn = db.connect(dsn, role="scirag_reader", autocommit=True)
    yield conn
    conn.close()


@pytest.fixture
def admin_conn(dsn):
    """Superuser connection for inspecting every row (RLS is forced, but the login
    is a superuser and superusers bypass row-level security)."""
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)
    yield conn
    conn.close()


@pytest.fixture
def restore_corpus(dsn, demo_corpus):
    """Deletes every document a test adds, so later tests see exactly the demo corpus."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        before = conn.execute("SELECT coalesce(max(id), 0) FROM scirag.documents").fetchone()[0]
    yield
    with psycopg.connect(dsn, autocommit=True) as conn:
        # every layer, entities only they mentioned included (scirag.document_delete, issue 25)
        conn.execute("SELECT scirag.document_delete(external_id) FROM scirag.documents WHERE id > %s", (before,))
