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


def _answer_options_of(full: dict) -> dict:
    """What a preset sets for scirag.answer, written from the preset's sections (the
    mapping the answerer applied in Python before scirag.preset_resolve held it)."""
    ret, con, aug = full["retrieval"], full["consolidation"], full["augmentation"]
    out = {"max_sources": aug["top_n_contexts"]}
    if ret["enrichment_enabled"]:
        out["enrich"] = {
            "enabled": True,
            "min_word_count": ret["min_word_count"],
            "max_word_count": ret["max_word_count"],
        }
    if con["enabled"]:
        keys = ("coverage_threshold", "line_gap", "min_content_length", "enrich_from_parent")
        out["consolidate"] = {"enabled": True, **{k: con[k] for k in keys}}
    if ret["min_sentence_filter_enabled"]:
        out["min_sentences"] = ret["min_sentence_count"]
    if isinstance(ret["profile"], str):
        out["profile"] = ret["profile"]
    return out


def test_preset_resolve_is_the_one_reading_of_a_preset(reader_conn, cli, name):
    """scirag.preset_resolve gives each stage its part: the answer options, the retrieve
    options (which retrieve_config merges) and the consolidation section."""
    for preset in sorted(SHIPPED) + [name]:
        if preset == name:
            res = cli(
                "set",
                name,
                "-p",
                "retrieval.min_sentence_filter_enabled=true",
                "-p",
                "retrieval.min_sentence_count=3",
                "-p",
                "retrieval.profile=deep",
                "-p",
                "retrieval.reranker=llm",
            )
            assert res.exit_code == 0, res.output
        full = reader_conn.execute("SELECT scirag.preset_get(%s)", (preset,)).fetchone()[0]
        got = reader_conn.execute("SELECT scirag.preset_resolve(%s)", (preset,)).fetchone()[0]
        assert got["preset"] == preset and got["consolidation"] == full["consolidation"]
        assert got["answer"] == _answer_options_of(full), preset
        ret = got["retrieve"]
        assert ret["preset"] == preset and ret["k"] == full["retrieval"]["top_n_final"]
        assert ret["depths"] == {
            "vector": full["retrieval"]["dense_limit"],
            "keyword": full["retrieval"]["lexical_limit"],
        }
        # the rerank stage only when one of its parts is on
        on = full["retrieval"]["reranker"] != "none" or full["retrieval"]["intent_bias_enabled"]
        assert ("rerank" in ret) == (on or full["retrieval"]["entity_boost"] > 0), preset
        cfg = reader_conn.execute(
            "SELECT scirag.retrieve_config('interactive', 10, jsonb_build_object('preset', %s::text))", (preset,)
        ).fetchone()[0]
        assert {k: cfg[k] for k in ret if k not in ("depths", "rerank")} == {
            k: v for k, v in ret.items() if k not in ("depths", "rerank")
        }
    assert got["answer"]["min_sentences"] == 3 and got["answer"]["profile"] == "deep"
    assert got["retrieve"]["rerank"]["reranker"] == "llm"
    with pytest.raises(Exception, match='unknown preset "no-such"'):
        reader_conn.execute("SELECT scirag.preset_resolve('no-such')")
