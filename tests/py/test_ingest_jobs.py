"""`scirag ingest --jobs N` (issue 25): worker processes parse, chunk and embed each
document; the main process stores what they return and never loads the embedding model;
what is stored equals a --jobs 1 run (metadata, chunks, vectors, report rows)."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from scirag import db
from scirag.ingest.discover import discover
from scirag.ingest.parse_guard import GuardedParser
from scirag.ingest.pipeline import Ingester, ingest_entries

from conftest import PYTEST_DB
from test_ingest_folder import cli, mixed_folder


@pytest.fixture(scope="module")
def two_dbs(base_dsn):
    """Two empty, deployed databases: one for --jobs 2 and one for --jobs 1."""
    targets = [db.with_dbname(base_dsn, f"{PYTEST_DB}_jobs{n}") for n in (2, 1)]
    for t in targets:
        db.drop_db(t)
        db.init_db(t)
    yield targets
    for t in targets:
        db.drop_db(t)


def corpus(root):
    mixed_folder(root)  # a PDF, Markdown, HTML and text, metadata read from each
    notes = (root / "papers" / "deep" / "notes.md").read_text(encoding="utf-8")
    (root / "copy.md").write_text(notes, encoding="utf-8")  # the same content: a duplicate
    (root / "empty.md").write_text("\n\n", encoding="utf-8")  # no usable text: a failed line
    for n in range(3):  # more documents than workers, so both workers embed
        (root / f"note{n}.md").write_text(
            f"# Note {n}\n\nBale stack {n} held {10 + n} percent moisture after {n + 2} nights.\n" * (n + 1),
            encoding="utf-8",
        )
    return root


def stored(dsn):
    with psycopg.connect(dsn) as conn:
        docs = conn.execute(
            """SELECT external_id, title, authors, year, doi, arxiv_id, metadata_inferred, content_hash,
                      parser, pages, license::text
               FROM scirag.documents ORDER BY external_id"""
        ).fetchall()
        chunks = conn.execute(
            """SELECT d.external_id, c.ordinal, c.kind, c.content, c.embedding_version, c.embedding::text
               FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
               ORDER BY d.external_id, c.ordinal"""
        ).fetchall()
        reports = conn.execute(
            """SELECT external_id, status, chunks FROM scirag.ingest_reports ORDER BY external_id"""
        ).fetchall()
    return docs, chunks, reports


def vector(text):
    return None if text is None else np.array([float(x) for x in text.strip("[]").split(",")], dtype=np.float32)


def test_workers_embed_and_the_result_equals_one_process(tmp_path, two_dbs):
    jobs2, jobs1 = two_dbs
    root = corpus(tmp_path / "corpus")
    ahead = {e.id: e for e in discover([root], license="public").entries}  # metadata read ahead

    # --jobs 2 in this process: it must not load the model, and every leaf gets a vector
    with db.connect(jobs2, role=db.LOADER_ROLE) as conn, GuardedParser() as parser:
        found = discover([root], license="public", reader=parser, infer_at_parse=True)
        ingester = Ingester(conn, parser=parser)
        counts = ingest_entries(conn, found.items, "jobs 2", ingester, jobs=2)
        assert ingester._embedder is None, "the main process loaded the embedding model"
        assert sum(parser.requests.values()) == 0, "the main process parsed: the workers parse"
    # empty.md and page.html (one short sentence) have no usable text; copy.md is notes.md
    assert (counts["added"], counts["duplicate"], counts["failed"]) == (len(ahead) - 3, 1, 2)

    # --jobs 1 through the command: one process parses, embeds and stores
    proc = cli(jobs1, "ingest", root, "--license", "public", "--jobs", 1)
    assert proc.returncode == 1 and "6 added, 1 duplicate, 2 failed" in proc.stderr, proc.stderr

    docs2, chunks2, reports2 = stored(jobs2)
    docs1, chunks1, reports1 = stored(jobs1)
    assert docs2 == docs1 and reports2 == reports1
    # the metadata read by each file's one parse is what discovery reads ahead
    for ident, title, authors, year, doi, arxiv_id, inferred, *_ in docs2:
        e = ahead[ident]
        assert (title, authors, year, doi, arxiv_id, inferred) == (
            e.title,
            e.authors,
            e.year,
            e.doi,
            e.arxiv_id,
            e.inferred,
        )
    assert [c[:5] for c in chunks2] == [c[:5] for c in chunks1]
    leaves = [c for c in chunks2 if c[2] != "section"]
    assert leaves and all(c[5] is not None and c[4] == ingester.embedding_version for c in leaves)
    # the same model on the same batches: equal vectors (one ONNX thread in a worker, two here)
    worst = max(float(np.abs(vector(a[5]) - vector(b[5])).max()) for a, b in zip(chunks2, chunks1) if a[5])
    assert worst < 1e-5, worst


def test_jobs_default_is_one_worker_per_core(monkeypatch):
    """`--jobs` defaults to 0, one parse worker per CPU core, capped by the run's documents."""
    import typer

    from scirag import cli_ingest
    from scirag.cli import app

    ingest = typer.main.get_command(app).commands["ingest"]
    (option,) = [p for p in ingest.params if "--jobs" in getattr(p, "opts", [])]
    assert option.default == 0
    monkeypatch.setattr(cli_ingest.os, "cpu_count", lambda: 4)
    assert cli_ingest.worker_count(option.default, 9) == 4  # one per core
    assert cli_ingest.worker_count(0, 2) == 2  # no idle workers for a short run
    assert cli_ingest.worker_count(1, 9) == 1 and cli_ingest.worker_count(3, 9) == 3  # as given
    assert cli_ingest.worker_count(0, 0) == 1
    monkeypatch.setattr(cli_ingest.os, "cpu_count", lambda: None)  # unknown: one process
    assert cli_ingest.worker_count(0, 9) == 1
