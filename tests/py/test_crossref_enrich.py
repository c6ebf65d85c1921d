"""`scirag enrich` against the demo corpus in scirag_pytest, on recorded Crossref
responses: records, retraction status, citation links and their scope."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from scirag.crossref import CrossrefClient, RecordedSession
from scirag.upkeep.enrich import enrich_documents, summary

RECORDINGS = Path(__file__).parent / "recordings"


def recorded_client(recordings=None) -> tuple[CrossrefClient, RecordedSession]:
    session = RecordedSession(recordings) if recordings is not None else RecordedSession.from_dir(RECORDINGS)
    return CrossrefClient(session=session, min_interval=0.0, sleep=lambda s: None, cache_dir=None), session


@pytest.fixture
def keep_demo_state(dsn, demo_corpus):
    """Puts back what enrichment changes on the demo documents, so later tests see the
    demo corpus as ingested."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        saved = conn.execute("SELECT id, crossref, retracted, journal FROM scirag.documents").fetchall()
    yield
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM scirag.document_citations WHERE origin = 'crossref'")
        for doc_id, crossref, retracted, journal in saved:
            conn.execute(
                "UPDATE scirag.documents SET crossref = %s, retracted = %s, journal = %s WHERE id = %s",
                (json.dumps(crossref) if crossref is not None else None, retracted, journal, doc_id),
            )


def doc(admin_conn, external_id):
    return admin_conn.execute(
        "SELECT id, crossref, retracted, journal FROM scirag.documents WHERE external_id = %s", (external_id,)
    ).fetchone()


def test_enrich_records_each_outcome_in_its_own_transaction(loader_conn, admin_conn, keep_demo_state):
    client, _ = recorded_client()
    results = {r.external_id: r for r in enrich_documents(loader_conn, client)}
    status = {k: r.status for k, r in results.items()}
    assert status["residue-composition"] == "enriched"
    assert status["soc-retention"] == "not_found"
    assert status["logistics-cost"] == "error"  # malformed JSON
    assert status["biogas-bmp"] == "enriched"  # after a 429 and its Retry-After
    assert summary(list(results.values()))["retracted"] == 1

    _, rec, retracted, journal = doc(admin_conn, "residue-composition")
    assert journal == "Journal of Agricultural Residue Science" and retracted is False
    assert rec["status"] == "ok" and rec["is_referenced_by_count"] == 14 and rec["fetched_at"]
    _, rec, retracted, _ = doc(admin_conn, "rice-burning")
    assert retracted is True and rec["retraction"]["doi"] == "10.5555/scirag.demo.908"
    # the triggers carried the retraction to every evidence row of the document
    assert (
        admin_conn.execute(
            """SELECT bool_and(c.retracted) FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
           WHERE d.external_id = 'rice-burning'"""
        ).fetchone()[0]
        is True
    )
    # the failed document kept what it had (nothing), the 404 is remembered as such
    assert doc(admin_conn, "logistics-cost")[1] is None
    assert doc(admin_conn, "soc-retention")[1]["status"] == "not_found"
    assert doc(admin_conn, "soc-retention")[2] is False
    # doctor names the one document still unknown to Crossref, and how to retry it
    from scirag.upkeep import doctor

    [pending] = [f for f in doctor.run_doctor(admin_conn) if f.check == "crossref_pending"]
    assert (pending.severity, pending.count, pending.fix) == ("warning", 1, "scirag enrich --missing")


def test_rerun_reports_unchanged_then_only_what_changed(loader_conn, admin_conn, keep_demo_state):
    client, _ = recorded_client()
    enrich_documents(loader_conn, client, external_ids=["residue-composition"])
    fetched = doc(admin_conn, "residue-composition")[1]["fetched_at"]
    client, _ = recorded_client()
    [again] = enrich_documents(loader_conn, client, external_ids=["residue-composition"])
    assert again.status == "unchanged" and again.changes == []

    recs = [json.loads(p.read_text()) for p in sorted(RECORDINGS.glob("crossref_*.json"))]
    recs = copy.deepcopy(recs)
    for rec in recs:
        for it in rec["interactions"]:
            if it["request"]["path"] == "/works/10.5555/scirag.demo.002":
                it["responses"][0]["body"]["message"]["is-referenced-by-count"] = 15
    client, _ = recorded_client(recs)
    [changed] = enrich_documents(loader_conn, client, external_ids=["residue-composition"])
    assert changed.status == "enriched" and changed.changes == ["is_referenced_by_count: 14 -> 15"]
    rec = doc(admin_conn, "residue-composition")[1]
    assert rec["is_referenced_by_count"] == 15 and rec["fetched_at"] >= fetched


def test_a_later_404_keeps_the_previous_record(loader_conn, admin_conn, keep_demo_state):
    client, _ = recorded_client()
    enrich_documents(loader_conn, client, external_ids=["residue-composition"])
    client, _ = recorded_client([])  # Crossref knows nothing now
    [res] = enrich_documents(loader_conn, client, external_ids=["residue-composition"])
    assert res.status == "not_found" and "kept" in res.error
    assert doc(admin_conn, "residue-composition")[1]["status"] == "ok"


def test_unknown_external_id_is_refused_by_name(loader_conn):
    with pytest.raises(ValueError, match="'no-such-doc'"):
        enrich_documents(loader_conn, recorded_client()[0], external_ids=["no-such-doc"])


def test_crossref_references_become_resolved_and_unresolved_citations(loader_conn, admin_conn, keep_demo_state):
    enrich_documents(loader_conn, recorded_client()[0], external_ids=["rpr-review"])
    rows = admin_conn.execute(
        """SELECT c.cited_doi, t.external_id, c.origin, c.chunk_id, c.license
           FROM scirag.document_citations c JOIN scirag.documents d ON d.id = c.document_id
           LEFT JOIN scirag.documents t ON t.id = c.cited_document_id
           WHERE d.external_id = 'rpr-review' AND c.origin = 'crossref' ORDER BY 1"""
    ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        ("10.1016/j.biombioe.2011.01.001", None),
        ("10.5555/scirag.demo.001", "county-straw-2022"),
        ("10.5555/scirag.demo.002", "residue-composition"),
    ]
    # a chunk-less citation takes its scope columns from the citing document
    assert {(r[2], r[3], r[4]) for r in rows} == {("crossref", None, "open_noncommercial")}

    # Crossref drops a reference: the next run drops its citation, nothing else
    recs = [json.loads(p.read_text()) for p in sorted(RECORDINGS.glob("crossref_*.json"))]
    for rec in recs:
        for it in rec["interactions"]:
            if it["request"]["path"] == "/works/10.5555/scirag.demo.003":
                refs = it["responses"][0]["body"]["message"]["reference"]
                refs[:] = [r for r in refs if r.get("DOI") != "10.5555/scirag.demo.001"]
    [res] = enrich_documents(loader_conn, recorded_client(recs)[0], external_ids=["rpr-review"])
    assert "references +0/-1" in res.changes
    assert (
        admin_conn.execute(
            """SELECT count(*) FROM scirag.document_citations c JOIN scirag.documents d ON d.id = c.document_id
           WHERE d.external_id = 'rpr-review' AND c.origin = 'crossref'"""
        ).fetchone()[0]
        == 2
    )


def test_references_and_cited_by_follow_the_readers_scope(loader_conn, reader_conn, admin_conn, keep_demo_state):
    enrich_documents(loader_conn, recorded_client()[0], external_ids=["rpr-review"])
    ids = dict(admin_conn.execute("SELECT external_id, id FROM scirag.documents").fetchall())
    rpr, comp = ids["rpr-review"], ids["residue-composition"]

    # rpr-review is open_noncommercial: outside the reader's default (external-safe) scope
    assert reader_conn.execute("SELECT count(*) FROM scirag.references(%s)", (rpr,)).fetchone()[0] == 0
    assert rpr not in [r[0] for r in reader_conn.execute("SELECT document_id FROM scirag.cited_by(%s)", (comp,))]

    reader_conn.execute("SET scirag.licenses = 'public,open_commercial,open_noncommercial'")
    refs = reader_conn.execute(
        "SELECT cited_doi, resolved, external_id, origin FROM scirag.references(%s)", (rpr,)
    ).fetchall()
    assert refs[:2] == [
        ("10.5555/scirag.demo.001", True, "county-straw-2022", "crossref"),
        ("10.5555/scirag.demo.002", True, "residue-composition", "crossref"),
    ]
    assert refs[2] == ("10.1016/j.biombioe.2011.01.001", False, None, "crossref")  # unresolved last
    assert rpr in [r[0] for r in reader_conn.execute("SELECT document_id FROM scirag.cited_by(%s)", (comp,))]

    # an excluded cited document takes its resolved citation out of view (the policy)
    reader_conn.execute("SET scirag.exclude_documents = 'county-straw-2022'")
    assert "county-straw-2022" not in [
        r[0] for r in reader_conn.execute("SELECT external_id FROM scirag.references(%s)", (rpr,))
    ]
    assert (
        reader_conn.execute("SELECT count(*) FROM scirag.cited_by(%s)", (ids["county-straw-2022"],)).fetchone()[0] == 0
    )
    reader_conn.execute("RESET scirag.exclude_documents")
    reader_conn.execute("RESET scirag.licenses")


def test_deleting_the_citing_document_removes_its_crossref_citations(
    loader_conn, admin_conn, make_manifest, restore_corpus, embedder
):
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    manifest = make_manifest(
        [
            {
                "id": "citing-note",
                "text": "# Citing note\n\nA short note that cites the county "
                "straw assessment for its supply figures and nothing else of interest here.",
                "title": "Citing note",
                "doi": "10.5555/scirag.test.citing",
                "license": "public",
            }
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    rec = {
        "interactions": [
            {
                "request": {"path": "/works/10.5555/scirag.test.citing"},
                "responses": [
                    {
                        "status": 200,
                        "body": {
                            "status": "ok",
                            "message-type": "work",
                            "message": {
                                "DOI": "10.5555/scirag.test.citing",
                                "title": ["Citing note"],
                                "type": "report",
                                "reference": [{"key": "r1", "DOI": "10.5555/scirag.demo.001"}],
                            },
                        },
                    }
                ],
            }
        ]
    }
    enrich_documents(loader_conn, recorded_client([rec])[0], external_ids=["citing-note"])
    doc_id = doc(admin_conn, "citing-note")[0]
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.document_citations WHERE document_id = %s", (doc_id,)
        ).fetchone()[0]
        == 1
    )
    admin_conn.execute("DELETE FROM scirag.documents WHERE id = %s", (doc_id,))
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.document_citations WHERE document_id = %s", (doc_id,)
        ).fetchone()[0]
        == 0
    )


def test_a_document_without_doi_is_matched_by_title_only_when_asked(
    loader_conn, admin_conn, make_manifest, restore_corpus, embedder
):
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    title = "Winter Cover Crops After Straw Removal"
    manifest = make_manifest(
        [
            {
                "id": "no-doi-note",
                "title": title,
                "authors": ["Ada Ferreira"],
                "year": 2024,
                "license": "public",
                "text": "# Winter cover crops\n\nRye sown after straw "
                "removal kept soil cover above 30 % through the winter in all plots.",
            }
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    rec = {
        "interactions": [
            {
                "request": {"path": "/works", "params": {"query.bibliographic": title}},
                "responses": [
                    {
                        "status": 200,
                        "body": {
                            "status": "ok",
                            "message-type": "work-list",
                            "message": {
                                "items": [
                                    {
                                        "DOI": "10.5555/scirag.test.cover",
                                        "title": ["Winter cover crops after straw removal"],
                                        "issued": {"date-parts": [[2024, 2]]},
                                    }
                                ]
                            },
                        },
                    }
                ],
            },
            {
                "request": {"path": "/works/10.5555/scirag.test.cover"},
                "responses": [
                    {
                        "status": 200,
                        "body": {
                            "status": "ok",
                            "message-type": "work",
                            "message": {
                                "DOI": "10.5555/scirag.test.cover",
                                "title": ["Winter cover crops after straw removal"],
                                "container-title": ["Cover Crop Notes"],
                                "type": "journal-article",
                            },
                        },
                    }
                ],
            },
        ]
    }
    [skipped] = enrich_documents(loader_conn, recorded_client([rec])[0], external_ids=["no-doi-note"])
    assert skipped.status == "skipped"
    [res] = enrich_documents(loader_conn, recorded_client([rec])[0], external_ids=["no-doi-note"], by_title=True)
    assert res.status == "enriched" and res.doi == "10.5555/scirag.test.cover"
    doi, rec_ = admin_conn.execute(
        "SELECT doi, crossref FROM scirag.documents WHERE external_id = 'no-doi-note'"
    ).fetchone()
    assert doi == "10.5555/scirag.test.cover" and rec_["matched_by"] == "bibliographic"
    assert rec_["journal"] == "Cover Crop Notes"


def test_crossref_corrects_only_guessed_fields_and_doubts_a_guessed_doi_of_another_paper(
    loader_conn, admin_conn, make_manifest, restore_corpus, embedder
):
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    manifest = make_manifest(
        [
            {
                "id": "guessed-meta",
                "title": "STRAW BALE STORAGE LOSSES",
                "authors": ["J Doe"],
                "year": 1999,
                "doi": "10.5555/scirag.test.storage",
                "license": "public",
                "text": "# Straw bale storage losses\n\nOutdoor stacks lost 12 % of dry matter over one winter.",
            },
            {
                "id": "wrong-doi",
                "title": "Hammer mill energy for straw grinding",
                "doi": "10.5555/scirag.test.storage2",
                "license": "public",
                "text": "# Hammer mill energy\n\nGrinding wheat straw took 40 kWh per tonne.",
            },
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    admin_conn.execute("""UPDATE scirag.documents SET metadata_inferred = '{title,year,doi}'
                          WHERE external_id IN ('guessed-meta', 'wrong-doi')""")
    work = lambda doi, title: {
        "request": {"path": f"/works/{doi}"},
        "responses": [
            {
                "status": 200,
                "body": {
                    "status": "ok",
                    "message-type": "work",
                    "message": {
                        "DOI": doi,
                        "title": [title],
                        "type": "journal-article",
                        "published": {"date-parts": [[2021, 6]]},
                        "author": [{"given": "Jane", "family": "Doe"}],
                    },
                },
            }
        ],
    }
    doubtful = work("10.5555/scirag.test.storage2", "A survey of dairy parlour hygiene")
    msg = doubtful["responses"][0]["body"]["message"]
    msg.update(
        {
            "container-title": ["Dairy Hygiene"],
            "reference": [{"key": "r", "DOI": "10.5555/scirag.demo.001"}],
            "updated-by": [{"DOI": "10.5555/x", "type": "retraction", "source": "publisher"}],
        }
    )
    rec = {"interactions": [work("10.5555/scirag.test.storage", "Straw Bale Storage Losses"), doubtful]}
    results = {
        r.external_id: r
        for r in enrich_documents(loader_conn, recorded_client([rec])[0], external_ids=["guessed-meta", "wrong-doi"])
    }
    assert "title from Crossref" in results["guessed-meta"].changes
    row = admin_conn.execute("""SELECT title, authors, year, metadata_inferred FROM scirag.documents
                                WHERE external_id = 'guessed-meta'""").fetchone()
    # title and year were guessed: corrected; authors were stated: kept; the DOI is now confirmed
    assert row == ("Straw Bale Storage Losses", ["J Doe"], 2021, [])
    row = admin_conn.execute("""SELECT title, year, metadata_inferred, crossref->'doi_doubtful', retracted, journal,
                                       (SELECT count(*) FROM scirag.document_citations c WHERE c.document_id = d.id)
                                FROM scirag.documents d WHERE external_id = 'wrong-doi'""").fetchone()
    # another paper's record: kept for inspection, but its retraction, journal and references are not this one's
    assert row == ("Hammer mill energy for straw grinding", None, ["title", "year", "doi"], True, False, None, 0)


def test_enrich_command_replays_recordings_and_summarises(dsn, admin_conn, keep_demo_state):
    import os
    import subprocess
    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env.update(SCIRAG_DSN=dsn, COLUMNS="400")
    proc = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "scirag"),
            "enrich",
            "--replay",
            str(RECORDINGS),
            "--id",
            "residue-composition",
            "--id",
            "logistics-cost",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr  # one document failed, one did not
    assert "residue-composition doi:10.5555/scirag.demo.002: enriched (new record)" in proc.stderr
    assert "logistics-cost doi:10.5555/scirag.demo.007: error:" in proc.stderr and "not JSON" in proc.stderr
    assert "2 document(s): 1 enriched, 0 unchanged, 0 not in Crossref, 1 failed" in proc.stderr
    assert doc(admin_conn, "residue-composition")[3] == "Journal of Agricultural Residue Science"
