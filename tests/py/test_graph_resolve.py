"""Entity resolution: three conservative tiers, a dry run that writes nothing,
audited merges with tombstones, repointed evidence and cleared communities."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from scirag.graph.extract import ModelExtractor, run_extract
from scirag.graph.offline import OfflineExtractor
from scirag.graph.ontology import load_domain
from scirag.graph.resolve import Entity, apply_plan, candidates, plan_resolution
from scirag.ingest.manifest import read_manifest
from scirag_helpers.llm import RecordedClient

from conftest import DEMO_MANIFEST

DOMAIN = load_domain()
RECORDINGS = json.loads((Path(__file__).parent / "recordings" / "graph_resolve.json").read_text())
DEMO_IDS = [e.id for _, e in read_manifest(DEMO_MANIFEST)]
GRAPH_TABLES = [
    "kg_entities",
    "kg_mentions",
    "kg_relationships",
    "document_citations",
    "entity_resolution_audit",
    "kg_communities",
    "kg_community_members",
    "kg_community_chunks",
    "kg_options",
]


# ---------------------------------------------------------------------------
# Tiers (no database)
# ---------------------------------------------------------------------------


def ent(i, name, etype="Residue", aliases=(), declared=False, mentions=1):
    return Entity(i, name, etype, list(aliases), declared, mentions)


def test_tiers():
    cands = {
        (c.a, c.b): c
        for c in candidates(
            [
                ent(1, "corn stover", aliases=["maize stover", "Corn stover"], declared=True, mentions=40),
                ent(2, "maize stover"),  # alias of 1: tier 1
                ent(3, "Corn Stover (baled)"),  # normalises to 1's name: tier 1
                ent(4, "barley straw", declared=True),
                ent(5, "barley strow"),  # ratio 0.917: ambiguous, tier 3
                ent(6, "sodium hydroxide pretreatment", "Process"),
                ent(7, "sodium hydroxyde pretreatment", "Process"),  # ratio 0.966: tier 2
                ent(8, "lower heating value", "Property", declared=True),
                ent(9, "higher heating value", "Property", declared=True),  # both declared: never
                ent(10, "maize stover", "Crop"),  # other type: never
            ]
        )
    }
    assert (cands[(1, 2)].tier, cands[(1, 2)].method) == (1, "alias_overlap")
    assert (cands[(1, 3)].tier, cands[(1, 3)].method) == (1, "normalised_name")
    assert (cands[(6, 7)].tier, cands[(6, 7)].method) == (2, "high_similarity")
    assert (cands[(4, 5)].tier, cands[(4, 5)].method) == (3, "ambiguous")
    assert (8, 9) not in cands and (2, 10) not in cands


# ---------------------------------------------------------------------------
# Against the database
# ---------------------------------------------------------------------------


def snapshot(conn) -> dict:
    out = {}
    for t in GRAPH_TABLES:
        out[t] = conn.execute(
            f"SELECT count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM scirag.{t} x"
        ).fetchone()
    out["chunks.graph_extracted_at"] = conn.execute(
        "SELECT md5(string_agg(id || ':' || coalesce(graph_extracted_at::text, '-'), ',' ORDER BY id)) "
        "FROM scirag.chunks"
    ).fetchone()
    return out


@pytest.fixture
def duplicated_graph(dsn, demo_corpus, embedder, make_manifest, restore_corpus):
    """The demo graph plus a note whose model extraction fragments a few entities."""
    from scirag import db
    from scirag.graph.communities import build_communities
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    text = (
        "# Pretreatment Note\n\n## Trial\n\nMaize stover was soaked by sodium hydroxyde pretreatment; "
        "the pretreatment took three days. Barley strow was given the sodium hydroxide pretreatment too. "
        f"Batch {uuid.uuid4().hex}.\n"
    )
    manifest = make_manifest(
        [
            {
                "id": f"pretreat-{uuid.uuid4().hex[:8]}",
                "text": text,
                "format": "markdown",
                "title": "Pretreatment Note",
                "license": "public",
                "source": "test",
            }
        ]
    )
    with db.connect(dsn, role="scirag_loader") as conn:
        demo = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM scirag.documents WHERE external_id = ANY (%s)", (DEMO_IDS,)
            ).fetchall()
        ]
        run_extract(conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo)
        ingest_manifest(conn, manifest, Ingester(conn, embedder=embedder))
        doc = conn.execute("SELECT max(id) FROM scirag.documents").fetchone()[0]
        stats = run_extract(
            conn,
            DOMAIN,
            ModelExtractor(DOMAIN, RecordedClient({"in_order": [RECORDINGS["extract"]]})),
            document_ids=[doc],
        )
        assert (stats.extracted, stats.relationships) == (1, 3)
        build_communities(conn, DOMAIN, None, embedder=embedder)
    return doc


def names(conn, ids):
    return {i: n for i, n in conn.execute("SELECT id, name FROM scirag.kg_entities WHERE id = ANY (%s)", (list(ids),))}


def test_dry_run_then_apply(duplicated_graph, dsn, admin_conn, loader_conn, reader_conn):
    from typer.testing import CliRunner
    from scirag.cli import app

    # --- a dry run (through the CLI) writes nothing, anywhere
    before = snapshot(admin_conn)
    res = CliRunner().invoke(app, ["graph", "resolve-entities", "--dry-run", "--no-llm", "--dsn", dsn])
    assert res.exit_code == 0, res.output
    assert "'maize stover' -> 'corn stover'" in res.output
    assert "'sodium hydroxyde pretreatment' -> 'sodium hydroxide pretreatment'" in res.output
    assert "dry run: nothing was written" in res.output
    assert snapshot(admin_conn) == before

    # --- the deterministic tiers
    plan = plan_resolution(loader_conn, DOMAIN, None)
    assert [(m.merged_name, m.survivor_name, m.tier) for m in plan.merges] == [
        ("maize stover", "corn stover", 1),
        ("sodium hydroxyde pretreatment", "sodium hydroxide pretreatment", 2),
    ]
    assert sorted((c.a_name, c.b_name) for c in plan.undecided) == [
        ("alkaline pretreatment", "pretreatment"),
        ("barley straw", "barley strow"),
    ]

    # a malformed model decision merges nothing from tier 3 and is counted
    bad = plan_resolution(loader_conn, DOMAIN, RecordedClient({"in_order": [RECORDINGS["malformed"]]}))
    assert bad.model_errors == 1 and len(bad.merges) == 2 and len(bad.undecided) == 2
    assert snapshot(admin_conn) == before

    maize = loader_conn.execute("SELECT id FROM scirag.kg_entities WHERE name = 'maize stover'").fetchone()[0]
    corn = loader_conn.execute(
        "SELECT id FROM scirag.kg_entities WHERE name = 'corn stover' AND entity_type = 'Residue'"
    ).fetchone()[0]
    loader_conn.rollback()
    assert admin_conn.execute("SELECT count(*) FROM scirag.kg_communities").fetchone()[0] > 0
    result = apply_plan(loader_conn, plan)
    assert result["merged"] == 2 and result["communities_cleared"] > 0

    # tombstone, audit, evidence and relationships moved, communities cleared
    assert admin_conn.execute(
        "SELECT canonical_entity_id, merged_at IS NOT NULL FROM scirag.kg_entities WHERE id = %s", (maize,)
    ).fetchone() == (corn, True)
    audit = admin_conn.execute(
        """SELECT tier, method, survivor_name, merged_name, decided_by, mentions_moved, relationships_moved, run_id
           FROM scirag.entity_resolution_audit WHERE merged_entity_id = %s""",
        (maize,),
    ).fetchall()
    assert len(audit) == 1 and audit[0][:5] == (1, "alias_overlap", "corn stover", "maize stover", "rule")
    assert audit[0][5] >= 1 and audit[0][6] == 2 and audit[0][7] == result["run_id"]
    assert (
        admin_conn.execute("SELECT count(*) FROM scirag.kg_mentions WHERE entity_id = %s", (maize,)).fetchone()[0] == 0
    )
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kg_mentions WHERE entity_id = %s AND original_entity_id = %s "
            "AND document_id = %s",
            (corn, maize, duplicated_graph),
        ).fetchone()[0]
        == 1
    )
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kg_relationships WHERE %s IN (source_entity_id, target_entity_id)", (maize,)
        ).fetchone()[0]
        == 0
    )
    moved = admin_conn.execute(
        """SELECT t.name FROM scirag.kg_relationships r JOIN scirag.kg_entities t ON t.id = r.target_entity_id
           WHERE r.source_entity_id = %s AND r.document_id = %s ORDER BY 1""",
        (corn, duplicated_graph),
    ).fetchall()
    assert moved == [("pretreatment",), ("sodium hydroxide pretreatment",)]
    assert "maize stover" in [
        a.lower()
        for a in admin_conn.execute("SELECT aliases FROM scirag.kg_entities WHERE id = %s", (corn,)).fetchone()[0]
    ]
    assert admin_conn.execute("SELECT count(*) FROM scirag.kg_communities").fetchone()[0] == 0

    # the tombstone's name, written in visible evidence, still seeds the survivor
    seeds = [
        r[0] for r in reader_conn.execute("SELECT entity_id FROM scirag.graph_seed_entities('maize stover yields')")
    ]
    assert seeds == [corn]

    # --- tier 3 with the recorded model decision; a second apply is a new audited run
    plan3 = plan_resolution(loader_conn, DOMAIN, RecordedClient({"in_order": [RECORDINGS["decisions"]]}))
    assert [(m.merged_name, m.survivor_name, m.tier, m.decided_by) for m in plan3.merges] == [
        ("pretreatment", "alkaline pretreatment", 3, "recorded")
    ]
    assert [(c.a_name, c.b_name) for c in plan3.rejected] == [("barley straw", "barley strow")]
    second = apply_plan(loader_conn, plan3)
    assert second["merged"] == 1 and second["run_id"] != result["run_id"]
    assert admin_conn.execute(
        "SELECT count(DISTINCT run_id), count(*) FROM scirag.entity_resolution_audit WHERE run_id IN (%s, %s)",
        (result["run_id"], second["run_id"]),
    ).fetchone() == (2, 3)
    assert plan_resolution(loader_conn, DOMAIN, None).merges == []
