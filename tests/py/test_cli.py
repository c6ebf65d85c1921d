"""The `scirag` command line, run as a subprocess against scirag_pytest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid

import pytest

from conftest import ROOT

SCIRAG = ROOT / ".venv" / "bin" / "scirag"
SUMMARY = re.compile(r"(\d+) added, (\d+) duplicate, (\d+) failed")
QUESTION = "How much straw could Harlan County supply each year?"


@pytest.fixture
def run_cli(dsn):
    assert SCIRAG.exists(), f"{SCIRAG} is not installed: run scripts/install_python.sh"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env["SCIRAG_DSN"] = dsn
    env["COLUMNS"] = "400"  # typer/rich error boxes would otherwise wrap long paths

    def _run(*args, timeout=180):
        return subprocess.run([str(SCIRAG), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)

    return _run


def test_retrieve_prints_ranked_cited_results_and_trace(run_cli, demo_corpus):
    proc = run_cli("retrieve", QUESTION, "-k", "3")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"Q: {QUESTION}")
    ranks = re.findall(r"^\[(\d+)\] ", out, flags=re.M)
    assert ranks == ["1", "2", "3"]
    cites = re.findall(r"^\s+score (\d+\.\d+)\s+found by (.+?)\s+cite: (.+)$", out, flags=re.M)
    assert len(cites) == 3
    scores = [float(s) for s, _, _ in cites]
    assert scores == sorted(scores, reverse=True)
    for _, found, cite in cites:
        assert re.fullmatch(r"(vector|keyword)#\d+(, (vector|keyword)#\d+)*", found), found
        assert "doi:10.5555/scirag.demo." in cite
        assert cite != "None"
    assert "Crop Residue Availability in Four Calder Basin Counties" in out
    traces = [l for l in out.splitlines() if l.startswith("trace: ")]
    assert len(traces) == 1
    assert re.search(r"\bembed:ok\b", traces[0])
    assert re.search(r"\bvector:ok [\d.]+ms n=\d+", traces[0])
    assert re.search(r"\bkeyword:ok [\d.]+ms n=\d+", traces[0])
    assert "Harlan" not in traces[0]  # traces are content-free


def test_retrieve_json_parses_with_rank_and_citation(run_cli, demo_corpus):
    proc = run_cli("retrieve", QUESTION, "-k", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert isinstance(rows, list) and len(rows) == 3
    assert [r["rank"] for r in rows] == [1, 2, 3]
    for r in rows:
        assert {"rank", "score", "layers", "title", "section_path", "is_table", "content", "citation"} <= set(r)
        assert r["citation"]["cite"]
        assert r["citation"]["license"] in ("public", "open_commercial")  # the reader's default scope
        assert set(r["layers"]) <= {"vector", "keyword"}
    assert rows[0]["citation"]["external_id"] == "county-straw-2022"


def test_retrieve_keyword_layer_only(run_cli, demo_corpus):
    proc = run_cli("retrieve", QUESTION, "-k", "2", "--layers", "keyword", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == 2
    assert all(set(r["layers"]) == {"keyword"} for r in rows)


def test_retrieve_out_of_scope_question_prints_no_rows_marker(run_cli, demo_corpus):
    proc = run_cli("retrieve", "the of and", "-k", "3", "--layers", "keyword")
    assert proc.returncode == 0, proc.stderr
    assert "(no evidence in your scope)" in proc.stdout
    assert "trace: keyword:empty" in proc.stdout


def test_ingest_with_one_broken_line_stores_the_rest_and_exits_one(
    run_cli, demo_corpus, make_manifest, admin_conn, restore_corpus
):
    u = uuid.uuid4().hex
    manifest = make_manifest(
        [
            {
                "id": f"cli-good-{u}",
                "license": "public",
                "source": "cli-test",
                "text": f"Field trial {u}: the pellet mill produced 640 kg/m3 bulk density from barley straw at 12 % "
                f"conditioning moisture, with 96.4 % durability.",
            },
            '{"id": "cli-broken", "text": ',
            {"id": "county-again", "path": str(ROOT / "domain" / "demo" / "county-straw-assessment.md")},
        ]
    )
    # the demo file lies outside the manifest's folder: allowed explicitly (issue 13)
    proc = run_cli("ingest", str(manifest), "--allow-outside")
    # any failed line makes the exit status 1 (issue 25), the good lines are stored all the same
    assert proc.returncode == 1, proc.stderr
    assert "1 line(s) failed" in proc.stderr
    summary = SUMMARY.findall(proc.stderr + proc.stdout)
    assert summary == [("1", "1", "1")], proc.stderr
    assert "line 2" in proc.stderr  # the broken line is named in the progress output
    stored = admin_conn.execute(
        "SELECT license::text, source FROM scirag.documents WHERE external_id = %s", (f"cli-good-{u}",)
    ).fetchone()
    assert stored == ("public", "cli-test")


def test_ingest_exits_nonzero_when_everything_failed(run_cli, demo_corpus, make_manifest, admin_conn):
    docs = admin_conn.execute("SELECT count(*) FROM scirag.documents").fetchone()[0]
    manifest = make_manifest(
        [
            '{"id": "broken-1", ',
            {"id": "missing", "path": "nowhere.md"},
        ]
    )
    proc = run_cli("ingest", str(manifest))
    assert proc.returncode == 1, proc.stderr
    assert SUMMARY.findall(proc.stderr) == [("0", "0", "2")]
    assert admin_conn.execute("SELECT count(*) FROM scirag.documents").fetchone()[0] == docs


def test_ingest_missing_manifest_is_a_usage_error(run_cli, tmp_path):
    proc = run_cli("ingest", str(tmp_path / "does-not-exist.jsonl"))
    assert proc.returncode == 2
    assert "does-not-exist.jsonl" in proc.stderr and "does not exist" in proc.stderr


def test_benchmark_dsn_takes_a_named_database_as_given_and_names_one_otherwise(monkeypatch):
    """`scirag eval beir|scitab|pdf --dsn "... dbname=X"` loads into X; without a dbname
    the benchmark gets its own database on that server (never the user's papers)."""
    from pathlib import Path

    from psycopg.conninfo import conninfo_to_dict

    from scirag import db
    from scirag.evaluation.beir import beir_dsn

    assert conninfo_to_dict(beir_dsn("host=/s port=5 dbname=mine", Path("scifact")))["dbname"] == "mine"
    got = conninfo_to_dict(beir_dsn("host=/s port=5", Path("SciFact")))
    assert (got["dbname"], got["host"], got["port"]) == ("scirag_beir_scifact", "/s", "5")
    monkeypatch.setenv("SCIRAG_DSN", "host=/elsewhere port=7 dbname=papers")
    got = conninfo_to_dict(db.benchmark_dsn(None, "scirag_scitab"))
    assert (got["dbname"], got["host"]) == ("scirag_scitab", "/elsewhere")


def test_eval_compare_pairs_two_runs_and_names_a_missing_one(run_cli, loader_conn):
    ids = []
    for name, f1s in (("before", (0.2, 0.5, 0.0)), ("after", (0.6, 0.5, 0.3))):
        run = loader_conn.execute(
            "INSERT INTO scirag.eval_runs (kind, dataset, config_name, config, corpus_fingerprint) "
            "VALUES ('beir', %s, %s, '{}', '{}') RETURNING id",
            (f"cmp-{uuid.uuid4().hex[:8]}", name),
        ).fetchone()[0]
        for i, f1 in enumerate(f1s):
            loader_conn.execute(
                "INSERT INTO scirag.eval_results (run_id, question_id, metrics, retrieved, ms) VALUES (%s, %s, %s, '{}', 10)",
                (run, f"q{i}", json.dumps({"f1": f1})),
            )
        ids.append(run)
    loader_conn.commit()
    out = run_cli("eval", "compare", str(ids[0]), str(ids[1]), "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["metric"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert rows["f1"]["n"] == 3 and rows["f1"]["better"] == 2 and rows["f1"]["worse"] == 0
    assert rows["f1"]["diff"] == pytest.approx(0.7 / 3)
    table = run_cli("eval", "compare", str(ids[1]), str(ids[0]))
    assert re.search(r"^f1\s+3\s+0\.4667\s+0\.2333\s+-0\.2333", table.stdout, re.M), table.stdout
    missing = max(ids) + 1000
    bad = run_cli("eval", "compare", str(ids[0]), str(missing))
    assert bad.returncode == 2 and f"no evaluation run {missing}" in bad.stderr
