"""`scirag doctor` and `scirag gc` on scirag_pytest: each planted fault is reported
with a non-zero exit and fixed by the command the finding names."""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import numpy as np
import pytest

from conftest import ROOT
from scirag.upkeep import doctor

SCIRAG = ROOT / ".venv" / "bin" / "scirag"


@pytest.fixture
def run_cli(dsn):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "SCIRAG_"))}
    env["SCIRAG_DSN"] = dsn
    env["COLUMNS"] = "400"

    def _run(*args, timeout=300):
        return subprocess.run([str(SCIRAG), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)

    return _run


def finding(admin_conn, name) -> doctor.Finding:
    [f] = [f for f in doctor.run_doctor(admin_conn) if f.check == name]
    return f


def doctor_json(run_cli) -> tuple[int, dict]:
    proc = run_cli("doctor", "--json")
    return proc.returncode, {f["check"]: f for f in json.loads(proc.stdout)["findings"]}


def run_fix(run_cli, fix: str):
    """Runs the scirag command a finding names (the first alternative when it offers several)."""
    first = fix.split(" (")[0].split(", or ")[0].split(" && ")[0]
    args = shlex.split(first)
    assert args[0] == "scirag", fix
    proc = run_cli(*args[1:])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def assert_reported_then_fixed(run_cli, admin_conn, check):
    code, report = doctor_json(run_cli)
    f = report[check]
    assert code != 0 and f["severity"] == "problem" and f["count"] >= 1, f
    run_fix(run_cli, f["fix"])
    assert finding(admin_conn, check).severity == "ok"


def test_a_healthy_corpus_passes_the_checks_it_is_judged_by(admin_conn, demo_corpus):
    findings = {f.check: f for f in doctor.run_doctor(admin_conn)}
    assert set(findings) == {c.__name__.removeprefix("check_") for c in doctor.CHECKS}
    for name in (
        "stale_embeddings",
        "empty_documents",
        "duplicate_documents",
        "retracted_in_default_scope",
        "keyword_statistics",
        "index_validity",
        "role_ceilings",
        "settings_bounds",
        "dangling_graph_rows",
    ):
        assert findings[name].severity == "ok", findings[name]


def test_stale_embedding_is_reported_and_reembedded(run_cli, admin_conn, demo_corpus, embedder):
    chunk_id, content = admin_conn.execute(
        "SELECT id, content FROM scirag.chunks WHERE embedding IS NOT NULL ORDER BY id LIMIT 1"
    ).fetchone()
    assert finding(admin_conn, "stale_embeddings").severity == "ok"
    noise = np.random.default_rng(7).normal(size=384)
    noise /= np.linalg.norm(noise)
    admin_conn.execute(
        "UPDATE scirag.chunks SET embedding = %s::vector, embedding_version = 'older-model/384' WHERE id = %s",
        ("[" + ",".join(map(str, noise)) + "]", chunk_id),
    )
    f = finding(admin_conn, "stale_embeddings")
    assert f.count == 1 and "older-model/384: 1" in f.samples
    assert_reported_then_fixed(run_cli, admin_conn, "stale_embeddings")
    stored = admin_conn.execute(
        "SELECT embedding::text, embedding_version FROM scirag.chunks WHERE id = %s", (chunk_id,)
    ).fetchone()
    assert stored[1] == embedder.version
    vec = np.array(json.loads(stored[0]))
    assert float(vec @ embedder.embed([content])[0]) > 0.999


def test_duplicate_document_is_reported_and_deduped(
    run_cli, admin_conn, loader_conn, embedder, make_manifest, restore_corpus
):
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    assert finding(admin_conn, "duplicate_documents").severity == "ok"
    # the same paper again: same DOI, title differing only in case and punctuation, other bytes
    original = admin_conn.execute(
        "SELECT title, doi FROM scirag.documents WHERE external_id = 'baling-moisture-note'"
    ).fetchone()
    manifest = make_manifest(
        [
            {
                "id": "baling-copy",
                "title": original[0].upper() + ".",
                "doi": original[1].upper(),
                "license": "public",
                "text": "# Baling moisture\n\nA re-typed copy of the baling "
                "moisture note: large square bales at or below 15 % moisture, round bales up to 18 %.",
            }
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    f = finding(admin_conn, "duplicate_documents")
    assert f.severity == "problem" and any("baling-moisture-note, baling-copy" in s for s in f.samples)
    proc = run_cli("dedupe")  # dry run deletes nothing
    assert "would delete baling-copy" in proc.stdout
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.documents WHERE external_id = 'baling-copy'").fetchone()[0] == 1
    )
    assert_reported_then_fixed(run_cli, admin_conn, "duplicate_documents")
    ids = [
        r[0] for r in admin_conn.execute("SELECT external_id FROM scirag.documents WHERE external_id LIKE 'baling%'")
    ]
    assert ids == ["baling-moisture-note"]  # the first copy stays


def test_retracted_document_in_default_scope_is_reported_and_removed(
    run_cli, admin_conn, loader_conn, embedder, make_manifest, restore_corpus
):
    from scirag.crossref import CrossrefClient, RecordedSession
    from scirag.upkeep.enrich import enrich_documents
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    assert finding(admin_conn, "retracted_in_default_scope").severity == "ok"
    manifest = make_manifest(
        [
            {
                "id": "doomed-study",
                "title": "A study that will be retracted",
                "doi": "10.5555/scirag.test.doomed",
                "license": "public",
                "text": "# A study that will be retracted\n\nStraw yields of 9 t/ha were reported "
                "from a single plot that was later found to be mislabelled.",
            }
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    rec = {
        "interactions": [
            {
                "request": {"path": "/works/10.5555/scirag.test.doomed"},
                "responses": [
                    {
                        "status": 200,
                        "body": {
                            "status": "ok",
                            "message-type": "work",
                            "message": {
                                "DOI": "10.5555/scirag.test.doomed",
                                "title": ["A study that will be retracted"],
                                "type": "journal-article",
                                "updated-by": [
                                    {
                                        "DOI": "10.5555/scirag.test.notice",
                                        "type": "retraction",
                                        "source": "retraction-watch",
                                        "label": "Retraction",
                                        "updated": {"date-parts": [[2025, 1, 2]]},
                                    }
                                ],
                            },
                        },
                    }
                ],
            }
        ]
    }
    client = CrossrefClient(session=RecordedSession([rec]), min_interval=0.0, cache_dir=None)
    enrich_documents(loader_conn, client, external_ids=["doomed-study"])
    f = finding(admin_conn, "retracted_in_default_scope")
    assert f.severity == "problem" and f.count == 1 and "doomed-study" in f.samples[0]
    proc = run_cli("retractions")
    assert "doomed-study doi:10.5555/scirag.test.doomed retracted by 10.5555/scirag.test.notice" in proc.stdout
    assert_reported_then_fixed(run_cli, admin_conn, "retracted_in_default_scope")
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.documents WHERE external_id = 'doomed-study'").fetchone()[0]
        == 0
    )


def test_exclude_by_default_also_clears_the_retraction_finding(admin_conn, dsn, demo_corpus):
    from scirag.upkeep.maint import exclude_retracted_by_default
    import psycopg

    admin_conn.execute("UPDATE scirag.documents SET retracted = true WHERE external_id = 'pellet-trial'")
    dbname = admin_conn.execute("SELECT current_database()").fetchone()[0]
    try:
        assert finding(admin_conn, "retracted_in_default_scope").severity == "problem"
        with psycopg.connect(dsn) as conn:
            exclude_retracted_by_default(conn)
        assert finding(admin_conn, "retracted_in_default_scope").severity == "ok"
        with psycopg.connect(dsn, autocommit=True) as fresh:  # new sessions get the default
            assert fresh.execute("SELECT scirag.scope_exclude_retracted()").fetchone()[0] is True
    finally:
        admin_conn.execute(f'ALTER DATABASE "{dbname}" RESET scirag.exclude_retracted')
        admin_conn.execute("UPDATE scirag.documents SET retracted = false WHERE external_id = 'pellet-trial'")


def test_keyword_statistics_drift_is_reported_and_rebuilt_by_gc(run_cli, admin_conn, demo_corpus):
    assert finding(admin_conn, "keyword_statistics").severity == "ok"
    admin_conn.execute("""UPDATE scirag.kw_term_stats SET df = df + 2
                          WHERE (lexeme, license, source) = (SELECT lexeme, license, source FROM scirag.kw_term_stats
                                                             ORDER BY lexeme LIMIT 1)""")
    admin_conn.execute(
        "UPDATE scirag.kw_class_stats SET sum_dl = sum_dl - 1 WHERE license = 'public' AND source = 'county-extension'"
    )
    f = finding(admin_conn, "keyword_statistics")
    assert f.severity == "problem" and "1 term row(s), 1 class row(s)" in f.message
    proc = run_cli("gc")  # dry run: counts, changes nothing
    assert "keyword statistics rows: 2" in proc.stdout and "dry run" in proc.stdout
    assert finding(admin_conn, "keyword_statistics").severity == "problem"
    assert_reported_then_fixed(run_cli, admin_conn, "keyword_statistics")


def test_postings_of_a_deleted_chunk_are_collected(
    run_cli, admin_conn, loader_conn, embedder, make_manifest, restore_corpus
):
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    manifest = make_manifest(
        [
            {
                "id": "short-lived",
                "title": "Short-lived note",
                "license": "public",
                "text": "# Short-lived note\n\nZanzibarite pellets bind poorly without added lignin binder.",
            }
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    # a chunk deleted behind the triggers' back (a partial restore, a manual fix-up)
    admin_conn.execute("SET session_replication_role = replica")
    admin_conn.execute("""DELETE FROM scirag.chunks WHERE document_id =
                          (SELECT id FROM scirag.documents WHERE external_id = 'short-lived')""")
    admin_conn.execute("SET session_replication_role = DEFAULT")
    f = finding(admin_conn, "keyword_statistics")
    assert f.severity == "problem" and "posting(s) of deleted or section chunks" in f.message
    assert_reported_then_fixed(run_cli, admin_conn, "keyword_statistics")
    assert (
        admin_conn.execute(
            """SELECT count(*) FROM scirag.kw_term_stats
           WHERE lexeme = (SELECT lexeme FROM unnest(to_tsvector('english', 'zanzibarite')))"""
        ).fetchone()[0]
        == 0
    )
    # the document is now empty: doctor says so, and gc --empty-documents removes it
    assert_reported_then_fixed(run_cli, admin_conn, "empty_documents")


def test_graph_garbage_and_tombstone_chains_are_collected_keeping_tombstones(run_cli, admin_conn, demo_corpus):
    names = ("gc orphan", "gc survivor", "gc middle", "gc first", "gc target")
    ids = [
        admin_conn.execute(
            """INSERT INTO scirag.kg_entities (name, entity_type, extractor) VALUES (%s, 'Residue', 'test')
           RETURNING id""",
            (n,),
        ).fetchone()[0]
        for n in names
    ]
    orphan, survivor, middle, first, target = ids
    chunk, doc_id = admin_conn.execute(
        "SELECT id, document_id FROM scirag.chunks WHERE kind <> 'section' ORDER BY id LIMIT 1"
    ).fetchone()
    for ent in (survivor, target):
        admin_conn.execute(
            """INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id)
                              SELECT %s, %s, name, id FROM scirag.kg_entities WHERE id = %s""",
            (ent, chunk, ent),
        )
    # first -> middle -> survivor: a chain of tombstones; middle still holds a mention and an edge
    admin_conn.execute(
        "UPDATE scirag.kg_entities SET canonical_entity_id = %s, merged_at = now() WHERE id = %s", (survivor, middle)
    )
    admin_conn.execute(
        "UPDATE scirag.kg_entities SET canonical_entity_id = %s, merged_at = now() WHERE id = %s", (middle, first)
    )
    admin_conn.execute(
        """INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, original_entity_id)
                          VALUES (%s, %s, 'gc middle', %s)""",
        (middle, chunk, middle),
    )
    admin_conn.execute(
        """INSERT INTO scirag.kg_relationships (source_entity_id, target_entity_id, rel_type, phrase,
                            confidence, extractor, chunk_id) VALUES (%s, %s, 'PRODUCES', 'gc middle produces gc target',
                            0.7, 'test', %s)""",
        (middle, target, chunk),
    )
    # a merge applied after a community was built makes the community stale
    admin_conn.execute(
        """INSERT INTO scirag.entity_resolution_audit (run_id, tier, method, survivor_entity_id,
                            merged_entity_id, survivor_name, merged_name, entity_type, decided_by, reason)
                          VALUES ('gc-test', 1, 'test', %s, %s, 'gc survivor', 'gc middle', 'Residue', 'test', 'test')""",
        (survivor, middle),
    )
    community = admin_conn.execute(
        """INSERT INTO scirag.kg_communities (tier, tier_licenses, label, title, summary, summary_method, entity_count,
             relationship_count, source_documents, licenses, sources, any_retracted, built_at)
           VALUES (99, '{public}', 424242, 'gc community', 'summary', 'test', 2, 1, ARRAY[%s]::bigint[], '{public}',
                   '{x}', false, now() - interval '1 day') RETURNING id""",
        (doc_id,),
    ).fetchone()[0]
    try:
        g = finding(admin_conn, "dangling_graph_rows")
        assert g.severity == "problem" and "1 orphan entities" in g.message and "1 mentions on tombstones" in g.message
        assert "1 relationships on tombstones" in g.message
        assert finding(admin_conn, "tombstones").severity == "problem"
        assert finding(admin_conn, "stale_communities").severity == "problem"
        assert_reported_then_fixed(run_cli, admin_conn, "dangling_graph_rows")
        assert finding(admin_conn, "tombstones").severity != "problem"
        assert finding(admin_conn, "stale_communities").severity == "ok"
        rows = dict(
            admin_conn.execute(
                "SELECT id, canonical_entity_id FROM scirag.kg_entities WHERE id = ANY (%s)", (ids,)
            ).fetchall()
        )
        assert orphan not in rows  # garbage went
        assert rows[first] == survivor and rows[middle] == survivor  # tombstones kept, chain shortened
        assert admin_conn.execute(
            "SELECT array_agg(surface ORDER BY surface) FROM scirag.kg_mentions WHERE entity_id = %s", (survivor,)
        ).fetchone()[0] == ["gc middle", "gc survivor"]
        assert admin_conn.execute(
            """SELECT source_entity_id, target_entity_id FROM scirag.kg_relationships
                                     WHERE chunk_id = %s AND extractor = 'test'""",
            (chunk,),
        ).fetchall() == [(survivor, target)]
        assert (
            admin_conn.execute(
                "SELECT count(*) FROM scirag.entity_resolution_audit WHERE run_id = 'gc-test'"
            ).fetchone()[0]
            == 1
        )
        assert (
            admin_conn.execute("SELECT count(*) FROM scirag.kg_communities WHERE id = %s", (community,)).fetchone()[0]
            == 0
        )
    finally:
        admin_conn.execute("DELETE FROM scirag.kg_communities WHERE id = %s", (community,))
        admin_conn.execute("DELETE FROM scirag.entity_resolution_audit WHERE run_id = 'gc-test'")
        admin_conn.execute("DELETE FROM scirag.kg_relationships WHERE extractor = 'test'")
        admin_conn.execute(
            "DELETE FROM scirag.kg_mentions WHERE entity_id = ANY (%s) OR original_entity_id = ANY (%s)", (ids, ids)
        )
        admin_conn.execute(
            "UPDATE scirag.kg_entities SET canonical_entity_id = NULL, merged_at = NULL WHERE id = ANY (%s)", (ids,)
        )
        admin_conn.execute("DELETE FROM scirag.kg_entities WHERE id = ANY (%s)", (ids,))


def test_role_ceiling_of_a_dropped_role_and_bad_settings_are_reported(admin_conn, demo_corpus):
    admin_conn.execute("CREATE ROLE doctor_gone NOLOGIN")
    admin_conn.execute("INSERT INTO scirag.role_ceilings (role_name, licenses) VALUES ('doctor_gone', '{public}')")
    admin_conn.execute("DROP ROLE doctor_gone")
    old_k1 = admin_conn.execute("SELECT value FROM scirag.settings WHERE key = 'bm25_k1'").fetchone()[0]
    admin_conn.execute("UPDATE scirag.settings SET value = '7' WHERE key = 'bm25_k1'")
    admin_conn.execute("UPDATE scirag.kg_options SET value = 'sideways' WHERE key = 'rank_by'")
    try:
        f = finding(admin_conn, "role_ceilings")
        assert f.severity == "problem" and f.samples == ["doctor_gone"]
        admin_conn.execute(f.fix)  # the fix is the SQL it names
        assert finding(admin_conn, "role_ceilings").severity == "ok"
        s = finding(admin_conn, "settings_bounds")
        assert s.severity == "problem" and s.count == 2
        assert "settings.bm25_k1 = '7': outside [0.0, 3.0]" in s.samples
        assert any(x.startswith("kg_options.rank_by = 'sideways': not one of") for x in s.samples)
    finally:
        admin_conn.execute("DELETE FROM scirag.role_ceilings WHERE role_name = 'doctor_gone'")
        admin_conn.execute("UPDATE scirag.settings SET value = %s WHERE key = 'bm25_k1'", (old_k1,))
        admin_conn.execute("UPDATE scirag.kg_options SET value = 'hops' WHERE key = 'rank_by'")
    assert finding(admin_conn, "settings_bounds").severity == "ok"


def test_an_invalid_index_is_reported_with_its_reindex(admin_conn, demo_corpus):
    admin_conn.execute("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'scirag.chunks_tsv_gin'::regclass")
    try:
        f = finding(admin_conn, "index_validity")
        assert f.severity == "problem" and f.samples == ["scirag.chunks_tsv_gin (gin)"]
        admin_conn.execute(f.fix)
        assert finding(admin_conn, "index_validity").severity == "ok"
    finally:
        admin_conn.execute("UPDATE pg_index SET indisvalid = true WHERE indexrelid = 'scirag.chunks_tsv_gin'::regclass")


def test_doctor_text_report_names_each_fix_and_exits_non_zero(run_cli, admin_conn, demo_corpus):
    admin_conn.execute("UPDATE scirag.settings SET value = '-1' WHERE key = 'bm25_b'")
    try:
        proc = run_cli("doctor")
        assert proc.returncode == 1
        assert "[FAIL] settings_bounds" in proc.stdout and "fix: UPDATE scirag.settings" in proc.stdout
        assert f"{len(doctor.CHECKS) + 1} checks:" in proc.stdout  # + the replicas finding (routing)
    finally:
        admin_conn.execute("UPDATE scirag.settings SET value = '0.4' WHERE key = 'bm25_b'")


def test_near_identical_title_is_a_probable_duplicate_but_another_doi_is_another_work(
    run_cli, admin_conn, loader_conn, embedder, make_manifest, restore_corpus
):
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    manifest = make_manifest(
        [
            {
                "id": "typo-copy",
                "title": "Baling Moisture Thresolds for Cereal Straw and Corn Stover",
                "license": "public",
                "text": "# Baling moisture\n\nSquare bales at 15 % moisture or less; round bales tolerate 18 %.",
            },
            {
                "id": "other-work",
                "title": "Baling Moisture Thresholds for Cereal Straw and Corn Stover (corrigendum)",
                "doi": "10.5555/scirag.test.corrigendum",
                "license": "public",
                "text": "# Corrigendum\n\nThe round bale threshold in Table 2 should read 18 %, not 81 %.",
            },
        ]
    )
    ingest_manifest(loader_conn, manifest, Ingester(loader_conn, embedder=embedder))
    f = finding(admin_conn, "duplicate_documents")
    assert f.severity == "problem" and f.count == 1, f
    assert f.samples[0].startswith("near-identical titles") and f.samples[0].endswith("baling-moisture-note, typo-copy")
    assert_reported_then_fixed(run_cli, admin_conn, "duplicate_documents")
    left = {
        r[0]
        for r in admin_conn.execute(
            "SELECT external_id FROM scirag.documents WHERE external_id IN "
            "('typo-copy', 'other-work', 'baling-moisture-note')"
        )
    }
    assert left == {"other-work", "baling-moisture-note"}
