"""No false positives after a real entity merge. Applied merges are permanent (tombstones,
audit rows), so this module works in a database of its own: the shared scirag_pytest
keeps the unmerged demo graph that test_graph_resolve expects."""

from __future__ import annotations

import pytest

from conftest import DEMO_MANIFEST, PYTEST_DB
from scirag.upkeep import doctor
from test_graph_resolve import duplicated_graph


@pytest.fixture(scope="module")
def dsn(base_dsn):
    """A database of this module's own (overrides conftest's dsn here only)."""
    import psycopg
    from scirag import db

    name = f"{PYTEST_DB}_merge"
    target = db.with_dbname(base_dsn, name)
    with psycopg.connect(db.with_dbname(base_dsn, "postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    db.init_db(target)
    yield target
    with psycopg.connect(db.with_dbname(base_dsn, "postgres"), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def demo_corpus(dsn, embedder):
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    with db.connect(dsn, role="scirag_loader") as conn:
        return ingest_manifest(conn, DEMO_MANIFEST, Ingester(conn, embedder=embedder))


def test_a_real_merge_leaves_nothing_for_doctor_or_gc(duplicated_graph, dsn, admin_conn):
    """After resolve-entities applies real merges (tombstones, audit rows, communities
    cleared), the graph checks pass and gc finds nothing to remove."""
    from typer.testing import CliRunner
    from scirag.cli import app
    from scirag.upkeep.gc import run_gc

    res = CliRunner().invoke(app, ["graph", "resolve-entities", "--apply", "--no-llm", "--dsn", dsn])
    assert res.exit_code == 0, res.output
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.kg_entities WHERE canonical_entity_id IS NOT NULL").fetchone()[
            0
        ]
        > 0
    )
    findings = {f.check: f for f in doctor.run_doctor(admin_conn)}
    for name in ("dangling_graph_rows", "tombstones", "stale_communities", "keyword_statistics"):
        assert findings[name].severity == "ok", findings[name]
    import psycopg

    with psycopg.connect(dsn) as conn:
        report = run_gc(conn, apply=False)
    assert sum(report.actions.values()) == 0, report.actions
