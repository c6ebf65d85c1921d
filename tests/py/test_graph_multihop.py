"""The multi-hop ablation through scirag.retrieve (deep profile) on the demo corpus.

Planted chain 2 (domain/demo/README.md): the Fenwick depot receives only corn
stover (logistics-cost), and corn stover's methane potential is in the biogas
report's Table 1, which never names Fenwick or Osgood. The question below shares
no content word with that table chunk: keyword search cannot reach it, and it is
only the graph walk Fenwick depot -> corn stover that brings it into the top 10."""
from __future__ import annotations

import json

import pytest

from scirag.graph.communities import build_communities
from scirag.graph.extract import run_extract
from scirag.graph.offline import OfflineExtractor
from scirag.graph.ontology import load_domain
from scirag.manifest import read_manifest

from conftest import DEMO_MANIFEST

DOMAIN = load_domain()
DEMO_IDS = [e.id for _, e in read_manifest(DEMO_MANIFEST)]
QUESTION = "How much gas can the Fenwick depot's intake give in anaerobic tanks?"
ALL_FOUR = ["vector", "keyword", "graph", "community"]


@pytest.fixture(scope="module")
def demo_graph(dsn, demo_corpus, embedder):
    """The demo corpus with its offline graph and extractive communities (as `scirag graph extract`
    and `scirag graph communities` build them)."""
    from scirag import db
    with db.connect(dsn, role="scirag_loader") as conn:
        demo = [r[0] for r in conn.execute("SELECT id FROM scirag.documents WHERE external_id = ANY (%s)",
                                           (DEMO_IDS,)).fetchall()]
        run_extract(conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo)
        build_communities(conn, DOMAIN, None, embedder=embedder)


@pytest.fixture
def answer_chunk(reader_conn):
    row = reader_conn.execute(
        """SELECT c.id FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
           WHERE d.external_id = 'biogas-bmp' AND c.is_table AND c.content LIKE '%%Corn stover | 77.5 | 93.9 | 0.263%%'
           ORDER BY c.id LIMIT 1""").fetchone()
    assert row, "the biogas report's Table 1 chunk"
    return row[0]


def retrieve(conn, layers, k=10):
    rows = conn.execute("SELECT chunk_id, layers FROM scirag.retrieve(%s, %s, 'deep', %s)",
                        (QUESTION, k, json.dumps({"layers": layers}))).fetchall()
    trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
    return rows, {s["stage"]: s["status"] for s in trace["stages"]}


def test_the_answer_chunk_shares_no_content_word_with_the_question(demo_graph, reader_conn, answer_chunk):
    shared = reader_conn.execute(
        """SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', %s))
                       INTERSECT SELECT lexeme FROM unnest((SELECT tsv FROM scirag.chunks WHERE id = %s)))""",
        (QUESTION, answer_chunk)).fetchone()[0]
    assert shared == []
    assert answer_chunk not in {r[0] for r in reader_conn.execute("SELECT chunk_id FROM scirag.search_keyword(%s, 100)",
                                                                  (QUESTION,))}


def test_the_deep_profile_runs_four_layers(demo_graph, reader_conn):
    rows, stages = retrieve(reader_conn, ALL_FOUR)
    assert len(rows) == 10
    assert all(stages[s] == "ok" for s in ALL_FOUR), stages


def test_graph_layer_ablation(demo_graph, reader_conn, answer_chunk):
    with_graph, stages = retrieve(reader_conn, ALL_FOUR)
    without, _ = retrieve(reader_conn, ["vector", "keyword", "community"])
    found = {c: layers for c, layers in with_graph}
    assert answer_chunk in found, "found with the graph layer"
    assert "graph" in found[answer_chunk] and "keyword" not in found[answer_chunk]
    assert answer_chunk not in {c for c, _ in without}, "and not without it"
    # the graph layer alone reaches it through the connecting entity
    seeds = [r[0] for r in reader_conn.execute(
        "SELECT e.name FROM scirag.graph_seed_entities(%s) s JOIN scirag.kg_entities e ON e.id = s.entity_id",
        (QUESTION,))]
    assert seeds == ["Fenwick depot"]
    hops = dict(reader_conn.execute("SELECT chunk_id, hops FROM scirag.search_graph(%s, 100)", (QUESTION,)).fetchall())
    assert hops[answer_chunk] == 1
