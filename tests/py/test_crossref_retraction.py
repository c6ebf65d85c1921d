"""Retraction as a live scope, end to end against the real database: ingest (the demo
corpus), answer, enrich with a recorded retraction, answer again. The sources change
and nothing is re-ingested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scirag.crossref import CrossrefClient, RecordedSession
from scirag.upkeep.enrich import enrich_documents

RECORDINGS = Path(__file__).parent / "recordings"
QUESTION = "What are the emission factors for open-field burning of rice straw?"
RETRACTED = "rice-burning"


def answer(conn, question, **options):
    row = conn.execute("SELECT scirag.answer(%s, %s::jsonb)", (question, json.dumps(options))).fetchone()
    conn.rollback() if not conn.autocommit else None
    return row[0]


def source_docs(result) -> list[str]:
    return [s["external_id"] for s in result["sources"]]


def retrieved(conn, exclude: str | None = None, k: int = 10) -> list[dict]:
    if exclude is not None:
        conn.execute("SELECT set_config('scirag.exclude_retracted', %s, false)", (exclude,))
    try:
        return [
            {"external_id": r[0], "citation": r[1]}
            for r in conn.execute("SELECT external_id, citation FROM scirag.retrieve(%s, k => %s)", (QUESTION, k))
        ]
    finally:
        conn.execute("RESET scirag.exclude_retracted")


@pytest.fixture
def retraction_round_trip(dsn, demo_corpus, admin_conn):
    """Leaves the demo corpus unretracted and unenriched afterwards."""
    saved = admin_conn.execute("SELECT id, crossref, retracted FROM scirag.documents").fetchall()
    yield
    admin_conn.execute("DELETE FROM scirag.document_citations WHERE origin = 'crossref'")
    for doc_id, crossref, retracted in saved:
        admin_conn.execute(
            "UPDATE scirag.documents SET crossref = %s, retracted = %s WHERE id = %s",
            (json.dumps(crossref) if crossref is not None else None, retracted, doc_id),
        )


def test_a_retraction_found_after_ingestion_changes_the_next_answer(
    reader_conn, loader_conn, admin_conn, retraction_round_trip
):
    corpus_before = admin_conn.execute(
        "SELECT count(*), max(id), (SELECT count(*) FROM scirag.ingest_runs) FROM scirag.chunks"
    ).fetchone()

    before = answer(reader_conn, QUESTION)
    assert RETRACTED in source_docs(before), "the question must be answered from the paper we retract"

    session = RecordedSession.from_files([RECORDINGS / "crossref_retracted.json"])
    client = CrossrefClient(session=session, min_interval=0.0, cache_dir=None, sleep=lambda s: None)
    [res] = enrich_documents(loader_conn, client, external_ids=[RETRACTED])
    assert res.status == "enriched" and res.retracted is True

    after = answer(reader_conn, QUESTION)
    assert RETRACTED not in source_docs(after)
    assert all(r["external_id"] != RETRACTED for r in after["retrieval"])
    assert source_docs(after) != source_docs(before)
    # nothing was re-ingested: same chunks, no new ingest run
    assert (
        admin_conn.execute(
            "SELECT count(*), max(id), (SELECT count(*) FROM scirag.ingest_runs) FROM scirag.chunks"
        ).fetchone()
        == corpus_before
    )

    # an answer that asks for retracted sources gets them back (the exclusion is a scope, not a deletion)
    wide = answer(reader_conn, QUESTION, include_retracted=True)
    assert RETRACTED in source_docs(wide)
    assert all(s.get("retracted") is (True if s["external_id"] == RETRACTED else None) for s in wide["sources"])

    # raw retrieval keeps the retracted paper unless the session excludes it
    assert RETRACTED in [r["external_id"] for r in retrieved(reader_conn)]
    assert RETRACTED not in [r["external_id"] for r in retrieved(reader_conn, exclude="on")]


def test_a_citation_to_a_retracted_document_says_so(reader_conn, loader_conn, retraction_round_trip):
    session = RecordedSession.from_files([RECORDINGS / "crossref_retracted.json"])
    client = CrossrefClient(session=session, min_interval=0.0, cache_dir=None, sleep=lambda s: None)
    enrich_documents(loader_conn, client, external_ids=[RETRACTED])
    rows = retrieved(reader_conn, k=40)
    flagged = [r["citation"] for r in rows if r["external_id"] == RETRACTED]
    others = [r["citation"] for r in rows if r["external_id"] != RETRACTED]
    assert flagged and others
    assert all(c.get("retracted") is True and "RETRACTED" in c["cite"] for c in flagged)
    assert all(not c.get("retracted") and "RETRACTED" not in c["cite"] for c in others)
