"""The multi-hop ablation through scirag.retrieve (deep profile) on the demo corpus.

Planted chain 1 (domain/demo/README.md): Harlan County's principal residue is
barley straw (county-straw-2022), and barley straw's composition (5.4 % ash,
17.1 % lignin, ...) is only in Table 1 of residue-composition, which names no
county. The question shares no content word with any chunk that holds the
answer: keyword search cannot reach it and hybrid retrieval ranks it below the
top 10; the graph walk Harlan County -> barley straw brings it in."""

from __future__ import annotations

import json

import pytest

from scirag.graph.communities import build_communities
from scirag.graph.extract import run_extract
from scirag.graph.offline import OfflineExtractor
from scirag.graph.ontology import load_domain
from scirag.ingest.manifest import read_manifest

from conftest import DEMO_MANIFEST

DOMAIN = load_domain()
DEMO_IDS = [e.id for _, e in read_manifest(DEMO_MANIFEST)]
QUESTION = "Which fibres make up Harlan County's chief leftover?"
ANSWER = "Barley straw | 18 | 35.2 | 25.6 | 17.1 | 5.4"
ALL_FOUR = ["vector", "keyword", "graph", "community"]


@pytest.fixture(scope="module")
def demo_graph(dsn, demo_corpus, embedder):
    """The demo corpus with its offline graph and extractive communities (as `scirag graph extract`
    and `scirag graph communities` build them)."""
    from scirag import db

    with db.connect(dsn, role="scirag_loader") as conn:
        demo = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM scirag.documents WHERE external_id = ANY (%s)", (DEMO_IDS,)
            ).fetchall()
        ]
        run_extract(conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo)
        build_communities(conn, DOMAIN, None, embedder=embedder)


@pytest.fixture
def answer_chunks(admin_conn):
    """Every chunk the reader may see that holds the answer row (Table 1 of residue-composition).
    Readers hold no privilege on chunks (policies/reader_wall): granted inside a rolled-back
    transaction, so row-level security decides what the reader sees."""
    with admin_conn.transaction(force_rollback=True):
        admin_conn.execute("GRANT SELECT ON scirag.chunks TO scirag_reader")
        admin_conn.execute("SET LOCAL ROLE scirag_reader")
        ids = [
            r[0]
            for r in admin_conn.execute(
                "SELECT c.id FROM scirag.chunks c WHERE strpos(c.content, %s) > 0 AND c.kind <> 'section'", (ANSWER,)
            )
        ]
    assert ids, "the composition table is in the default scope"
    return ids


def retrieve(conn, layers, k=10):
    rows = conn.execute(
        "SELECT chunk_id, layers FROM scirag.retrieve(%s, %s, 'deep', %s)",
        (QUESTION, k, json.dumps({"layers": layers})),
    ).fetchall()
    trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
    return rows, {s["stage"]: s["status"] for s in trace["stages"]}


def test_the_answer_shares_no_content_word_with_the_question(demo_graph, reader_conn, admin_conn, answer_chunks):
    for chunk in answer_chunks:  # (chunks.tsv: read as admin, readers may not: reader_wall)
        shared = admin_conn.execute(
            """SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', %s))
                           INTERSECT SELECT lexeme FROM unnest((SELECT tsv FROM scirag.chunks WHERE id = %s)))""",
            (QUESTION, chunk),
        ).fetchone()[0]
        assert shared == []
    keyword = {r[0] for r in reader_conn.execute("SELECT chunk_id FROM scirag.search_keyword(%s, 100)", (QUESTION,))}
    assert not keyword & set(answer_chunks)


def test_the_deep_profile_runs_four_layers(demo_graph, reader_conn):
    rows, stages = retrieve(reader_conn, ALL_FOUR)
    assert len(rows) == 10
    assert all(stages[s] == "ok" for s in ALL_FOUR), stages


def test_graph_layer_ablation(demo_graph, reader_conn, answer_chunks):
    """Hybrid (vector + keyword) has no chunk with the answer in its top 10; the same call
    with the graph layer has; so do the deep profile's four layers."""
    without, _ = retrieve(reader_conn, ["vector", "keyword"])
    with_graph, stages = retrieve(reader_conn, ["vector", "keyword", "graph"])
    assert stages["graph"] == "ok"
    assert not {c for c, _ in without} & set(answer_chunks), "not found without the graph layer"
    found = {c: layers for c, layers in with_graph if c in answer_chunks}
    assert found, "found with the graph layer"
    assert all("graph" in layers and "keyword" not in layers for layers in found.values())
    deep, _ = retrieve(reader_conn, ALL_FOUR)
    assert {c for c, _ in deep} & set(answer_chunks)
    # the graph layer reaches it through the connecting entity, one hop from the seed
    seeds = [
        r[0]
        for r in reader_conn.execute(
            "SELECT e.name FROM scirag.graph_seed_entities(%s) s, scirag.entities_visible(ARRAY[s.entity_id]) e",
            (QUESTION,),
        )
    ]
    assert seeds == ["Harlan County"]
    hops = dict(reader_conn.execute("SELECT chunk_id, hops FROM scirag.search_graph(%s, 100)", (QUESTION,)).fetchall())
    assert {hops.get(c) for c in found} == {1}
