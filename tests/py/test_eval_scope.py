"""Evaluation runs within the evaluating caller's scope (issue 13 item 7) and the
one eval-run starter every evaluation kind uses (issue 16)."""

from __future__ import annotations

import re
from pathlib import Path

from scirag import db
from scirag.evaluation.qa import reader_connection
from scirag.evaluation.runs import start_run

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "loader" / "scirag"


def run_row(admin_conn, run_id):
    return admin_conn.execute(
        "SELECT scope_licenses, scope_sources, corpus_fingerprint FROM scirag.eval_runs WHERE id = %s", (run_id,)
    ).fetchone()


def count_docs(admin_conn, licenses):
    return admin_conn.execute(
        "SELECT count(*) FROM scirag.documents WHERE license::text = ANY (%s)", (licenses,)
    ).fetchone()[0]


def test_a_run_records_the_readers_scope_and_a_fingerprint_within_it(dsn, demo_corpus, admin_conn):
    with db.connect(dsn, role=db.LOADER_ROLE) as writer:
        with reader_connection(dsn, "public") as reader:
            narrow = start_run(writer, reader, "retrieval", "pytest-scope", None, "public-only", {"k": 1})
        with reader_connection(dsn) as reader:
            default = start_run(writer, reader, "retrieval", "pytest-scope", None, "default", {"k": 1})
    lic, sources, fp = run_row(admin_conn, narrow)
    assert lic == ["public"] and sources is None
    assert fp["documents"] == count_docs(admin_conn, ["public"]) > 0
    assert {"chunks", "embedding_versions", "latest_ingestion", "kg_entities"} <= fp.keys()
    lic, _, fp_default = run_row(admin_conn, default)
    assert lic == ["open_commercial", "public"]
    assert fp_default["documents"] == count_docs(admin_conn, lic)
    # the corpus holds more than any reader scope: the loader's total never reaches a run
    total = admin_conn.execute("SELECT count(*) FROM scirag.documents").fetchone()[0]
    assert fp_default["documents"] < total


def test_a_reader_sees_a_run_only_within_its_own_scope(dsn, demo_corpus, admin_conn):
    with db.connect(dsn, role=db.LOADER_ROLE) as writer, reader_connection(dsn) as reader:
        run = start_run(writer, reader, "beir", "pytest-scope-vis", None, "default", {})
    with reader_connection(dsn) as reader:
        assert reader.execute("SELECT count(*) FROM scirag.eval_runs WHERE id = %s", (run,)).fetchone()[0] == 1
    with reader_connection(dsn, "public") as reader:
        assert reader.execute("SELECT count(*) FROM scirag.eval_runs WHERE id = %s", (run,)).fetchone()[0] == 0


def test_every_evaluation_kind_starts_its_run_through_the_one_starter():
    writers = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if "INSERT INTO scirag.eval_runs" in p.read_text()
    ]
    assert writers == ["evaluation/runs.py"]
    for name in ("evaluation/qa.py", "evaluation/beir.py", "evaluation/scitab.py", "evaluation/pdf.py"):
        text = (PACKAGE / name).read_text()
        assert re.search(r"\bstart_run\(\s*writer,\s*reader,", text), f"{name} does not start its runs with start_run"
