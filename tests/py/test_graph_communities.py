"""Communities: deterministic label propagation, model or extractive summaries,
license tiers, and what a scoped caller can see of them; plus the in-database
question-entity helper."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from scirag.graph.communities import Edge, build_communities, extractive_summary, label_propagation
from scirag.graph.extract import run_extract
from scirag.graph.offline import OfflineExtractor
from scirag.graph.ontology import load_domain
from scirag.manifest import read_manifest
from scirag_helpers.graph_query import build_prompt, parse_names, question_entities
from scirag_helpers.llm import RecordedClient

from conftest import DEMO_MANIFEST

DOMAIN = load_domain()
RECORDINGS = json.loads((Path(__file__).parent / "recordings" / "graph_communities.json").read_text())
DEMO_IDS = [e.id for _, e in read_manifest(DEMO_MANIFEST)]


# ---------------------------------------------------------------------------
# Label propagation and summaries (no database)
# ---------------------------------------------------------------------------

TWO_CLIQUES = {(1, 2): 1.0, (1, 3): 1.0, (2, 3): 1.0, (4, 5): 1.0, (4, 6): 1.0, (5, 6): 1.0, (3, 4): 0.4}


def groups(labels):
    out = {}
    for n, lbl in labels.items():
        out.setdefault(lbl, set()).add(n)
    return sorted(map(sorted, out.values()))


def test_label_propagation_finds_two_cliques_joined_by_a_weak_edge():
    assert groups(label_propagation([1, 2, 3, 4, 5, 6], TWO_CLIQUES)) == [[1, 2, 3], [4, 5, 6]]


def test_label_propagation_is_deterministic_whatever_the_input_order():
    expected = label_propagation([1, 2, 3, 4, 5, 6], TWO_CLIQUES)
    rng = random.Random(7)
    for _ in range(20):
        nodes = [1, 2, 3, 4, 5, 6]
        rng.shuffle(nodes)
        items = list(TWO_CLIQUES.items())
        rng.shuffle(items)
        assert label_propagation(nodes, dict(items)) == expected


def test_isolated_node_keeps_its_label():
    assert label_propagation([1, 2, 9], {(1, 2): 1.0})[9] == 9


def test_extractive_summary_quotes_prose_statements_first_and_once():
    names = {1: "barley straw", 2: "Harlan County", 3: "ash content"}
    edges = [Edge(1, 3, "HAS_PROPERTY", "Residue | Ash Barley straw | 5.4", 0.7, 10, 1),
             Edge(1, 2, "AVAILABLE_IN", "Harlan County's principal residue is barley straw.", 1.0, 11, 1),
             Edge(1, 2, "AVAILABLE_IN", "Harlan County's  principal residue is barley straw.", 1.0, 12, 1)]
    text = extractive_summary(["barley straw", "Harlan County", "ash content"], edges, names)
    lines = text.splitlines()
    assert lines[0] == "Entities: barley straw, Harlan County, ash content."
    assert lines[1] == "barley straw available in Harlan County: \"Harlan County's principal residue is barley straw.\""
    assert len(lines) == 3 and "5.4" in lines[2]


# ---------------------------------------------------------------------------
# The question-entity helper used by scirag.graph_question_entities
# ---------------------------------------------------------------------------

def test_question_entities_from_a_recorded_model():
    rec = RECORDINGS["question_entities"]
    client = RecordedClient({"in_order": [rec["valid"]]})
    assert question_entities(None, {}, "feedstock of the Fenwick depot?", client) == ["Fenwick depot", "feedstock"]
    assert "feedstock of the Fenwick depot?" in client.seen[0]["prompt"] and client.seen[0]["json_mode"]
    assert parse_names(rec["fenced"]) == ["Lomax County"]
    assert parse_names(rec["malformed"]) == [] and parse_names(rec["wrong_shape"]) == []


def test_question_entities_without_a_model_or_with_a_failing_one():
    assert question_entities(None, {}, "anything", RecordedClient({"in_order": []})) == []   # the model fails: []
    assert question_entities(None, {"scirag_graph_llm": None}, "anything") == []            # none configured
    assert question_entities(None, {}, "   ") == []
    assert build_prompt("q?").endswith('Answer with JSON: {"entities": ["...", "..."]}')


# ---------------------------------------------------------------------------
# Against the database
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_graph(dsn, demo_corpus):
    from scirag import db
    with db.connect(dsn, role="scirag_loader") as conn:
        demo = [r[0] for r in conn.execute("SELECT id FROM scirag.documents WHERE external_id = ANY (%s)",
                                           (DEMO_IDS,)).fetchall()]
        run_extract(conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo)


def communities(conn):
    return conn.execute("SELECT tier, label, title, summary, summary_method, source_documents, licenses, tier_licenses "
                        "FROM scirag.kg_communities ORDER BY tier, label").fetchall()


def test_communities_are_deterministic_and_built_per_tier(demo_graph, loader_conn, admin_conn, embedder):
    first = build_communities(loader_conn, DOMAIN, None, embedder=embedder)
    a = communities(admin_conn)
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)
    assert communities(admin_conn) == a and first.communities == len(a) > 0
    assert first.extractive_summaries == first.communities and first.model_summaries == 0
    for _tier, _label, _title, summary, method, _docs, licenses, tier_licenses in a:
        assert set(licenses) <= set(tier_licenses)
        assert summary.startswith("Entities: ") and method == "extractive"
    # the narrowest tier is built from public documents only
    assert {lic for row in a if row[0] == 1 for lic in row[6]} == {"public"}
    # every community's licenses are exactly those of its source documents
    assert admin_conn.execute(
        """SELECT count(*) FROM scirag.kg_communities k
           WHERE k.licenses <> ARRAY(SELECT DISTINCT d.license::text FROM scirag.documents d
                                     WHERE d.id = ANY (k.source_documents) ORDER BY 1)""").fetchone()[0] == 0
    # members and evidence chunks were written, and the summary is embedded
    assert admin_conn.execute("SELECT bool_and(embedding IS NOT NULL) FROM scirag.kg_communities").fetchone()[0]
    assert admin_conn.execute("SELECT count(*) FROM scirag.kg_community_members").fetchone()[0] >= 2 * len(a)


def test_a_scoped_reader_sees_only_communities_all_of_whose_sources_it_may_see(demo_graph, loader_conn, reader_conn,
                                                                               admin_conn, embedder):
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)
    visible_docs = {r[0] for r in reader_conn.execute("SELECT id FROM scirag.documents")}
    seen = reader_conn.execute("SELECT id, source_documents FROM scirag.kg_communities").fetchall()
    assert seen and all(set(docs) <= visible_docs for _, docs in seen)
    hidden = admin_conn.execute("SELECT id FROM scirag.kg_communities k WHERE NOT k.source_documents <@ %s::bigint[]",
                                (sorted(visible_docs),)).fetchall()
    assert hidden, "some community has a source outside the default scope"
    assert not {h[0] for h in hidden} & {s[0] for s in seen}
    # search_community answers from the broadest tier the reader sees in full
    from scirag_helpers.embedder import to_pgvector
    q = to_pgvector(embedder.embed(["Which residue does Harlan County supply?"])[0])
    rows = reader_conn.execute("SELECT c.community_id, k.tier FROM scirag.search_community(%s::public.vector, 10) c "
                               "JOIN scirag.kg_communities k ON k.id = c.community_id", (q,)).fetchall()
    assert rows and len({t for _, t in rows}) == 1
    assert rows[0][1] == max(t for (t,) in reader_conn.execute("SELECT tier FROM scirag.kg_communities"))
    chunks = reader_conn.execute("SELECT chunk_id FROM scirag.search_community_chunks(%s::public.vector, 100)", (q,)).fetchall()
    assert chunks and {c for (c,) in chunks} <= {c for (c,) in reader_conn.execute("SELECT id FROM scirag.chunks")}


def test_model_summaries_fall_back_to_extractive_when_the_model_fails(demo_graph, loader_conn, admin_conn, embedder):
    client = RecordedClient({"in_order": list(RECORDINGS["summaries"])})
    stats = build_communities(loader_conn, DOMAIN, client, embedder=embedder)
    assert stats.model_summaries == 3
    assert stats.model_failures == stats.communities - 3 == stats.extractive_summaries
    methods = dict(admin_conn.execute("SELECT summary_method, count(*) FROM scirag.kg_communities GROUP BY 1").fetchall())
    assert methods == {"recorded": 3, "extractive": stats.communities - 3}
    assert "Entities of one community" in client.seen[0]["prompt"]
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)      # leave the extractive build behind
