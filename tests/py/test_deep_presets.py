"""`scirag preset list|show|set|delete` against scirag_pytest (in-process, through
typer's CliRunner), and preset round trips through SQL."""

from __future__ import annotations

import json
import uuid

import pytest
from typer.testing import CliRunner

SHIPPED = {"default", "high-precision", "high-recall", "detailed-context"}


@pytest.fixture
def cli(dsn):
    from scirag.cli import app

    runner = CliRunner()

    def _run(*args):
        return runner.invoke(app, ["preset", *args], env={"SCIRAG_DSN": dsn, "COLUMNS": "400"})

    return _run


@pytest.fixture
def name(admin_conn):
    n = f"t-{uuid.uuid4().hex[:8]}"
    yield n
    admin_conn.execute("DELETE FROM scirag.presets WHERE name = %s", (n,))


def test_list_shows_the_shipped_presets(cli):
    res = cli("list", "--json")
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)}
    assert SHIPPED <= set(rows)
    assert rows["default"]["overrides"] == {}
    assert rows["high-recall"]["overrides"]["retrieval"]["top_k_rrf"] == 150
    text = cli("list")
    assert text.exit_code == 0 and "high-precision" in text.stdout and "overrides:" in text.stdout


def test_show_prints_the_complete_configuration(cli, admin_conn):
    res = cli("show", "default")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == admin_conn.execute("SELECT scirag.preset_defaults()").fetchone()[0]
    res = cli("show", "no-such-preset")
    assert res.exit_code == 1 and 'unknown preset "no-such-preset"' in res.stderr


def test_set_show_delete_round_trip(cli, name, reader_conn):
    res = cli(
        "set",
        name,
        "--config",
        '{"retrieval": {"mmr_lambda": 0.6}}',
        "-p",
        "consolidation.line_gap=4",
        "-p",
        "retrieval.reranker=llm",
        "-d",
        "round trip",
    )
    assert res.exit_code == 0, res.output
    full = json.loads(res.stdout)
    assert full["retrieval"]["mmr_lambda"] == 0.6 and full["consolidation"]["line_gap"] == 4
    assert full["retrieval"]["reranker"] == "llm" and full["augmentation"]["top_n_contexts"] == 5
    # the reader sees exactly what was stored
    assert reader_conn.execute("SELECT scirag.preset_get(%s)", (name,)).fetchone()[0] == full
    stored = reader_conn.execute(
        "SELECT overrides, description FROM scirag.preset_list() WHERE name = %s", (name,)
    ).fetchone()
    assert stored == (
        {"retrieval": {"mmr_lambda": 0.6, "reranker": "llm"}, "consolidation": {"line_gap": 4}},
        "round trip",
    )
    # --param alone edits the stored overrides; the description is kept
    res = cli("set", name, "-p", "retrieval.mmr_lambda=0.8")
    assert res.exit_code == 0, res.output
    stored = reader_conn.execute(
        "SELECT overrides, description FROM scirag.preset_list() WHERE name = %s", (name,)
    ).fetchone()
    assert stored[0]["retrieval"] == {"mmr_lambda": 0.8, "reranker": "llm"} and stored[1] == "round trip"
    assert json.loads(cli("show", name).stdout)["retrieval"]["mmr_lambda"] == 0.8
    assert cli("delete", name).exit_code == 0
    assert cli("show", name).exit_code == 1
    res = cli("delete", name)
    assert res.exit_code == 1 and "no preset named" in res.stderr


def test_set_validates_and_names_the_key(cli, name, reader_conn):
    res = cli("set", name, "-p", "retrieval.mmr_lamda=0.5")
    assert res.exit_code == 1 and 'unknown key "retrieval.mmr_lamda"' in res.stderr
    res = cli("set", name, "-p", "consolidation.coverage_threshold=high")
    assert res.exit_code == 1 and 'key "consolidation.coverage_threshold" must be a number (got string)' in res.stderr
    res = cli("set", name, "--config", "{not json")
    assert res.exit_code == 1 and "not valid JSON" in res.stderr
    assert reader_conn.execute("SELECT count(*) FROM scirag.presets WHERE name = %s", (name,)).fetchone()[0] == 0


def test_a_reader_cannot_write_presets(reader_conn):
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        reader_conn.execute("SELECT scirag.preset_set('evil', '{}')")
