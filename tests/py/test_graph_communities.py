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
from scirag.ingest.manifest import read_manifest
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
    edges = [
        Edge(1, 3, "HAS_PROPERTY", "Residue | Ash Barley straw | 5.4", 0.7, 10, 1),
        Edge(1, 2, "AVAILABLE_IN", "Harlan County's principal residue is barley straw.", 1.0, 11, 1),
        Edge(1, 2, "AVAILABLE_IN", "Harlan County's  principal residue is barley straw.", 1.0, 12, 1),
    ]
    text = extractive_summary(["barley straw", "Harlan County", "ash content"], edges, names)
    lines = text.splitlines()
    assert lines[0] == "Entities: barley straw, Harlan County, ash content."
    assert lines[1] == 'barley straw available in Harlan County: "Harlan County\'s principal residue is barley straw."'
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
    assert question_entities(None, {}, "anything", RecordedClient({"in_order": []})) == []  # the model fails: []
    assert question_entities(None, {"scirag_graph_llm": None}, "anything") == []  # none configured
    assert question_entities(None, {}, "   ") == []
    assert build_prompt("q?").endswith('Answer with JSON: {"entities": ["...", "..."]}')


# ---------------------------------------------------------------------------
# Against the database
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_graph(dsn, demo_corpus):
    from scirag import db

    with db.connect(dsn, role="scirag_loader") as conn:
        demo = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM scirag.documents WHERE external_id = ANY (%s)", (DEMO_IDS,)
            ).fetchall()
        ]
        run_extract(conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo)


def communities(conn):
    return conn.execute(
        "SELECT tier, label, title, summary, summary_method, source_documents, licenses, tier_licenses "
        "FROM scirag.kg_communities ORDER BY tier, label"
    ).fetchall()


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
    assert (
        admin_conn.execute(
            """SELECT count(*) FROM scirag.kg_communities k
           WHERE k.licenses <> ARRAY(SELECT DISTINCT d.license::text FROM scirag.documents d
                                     WHERE d.id = ANY (k.source_documents) ORDER BY 1)"""
        ).fetchone()[0]
        == 0
    )
    # members and evidence chunks were written, and the summary is embedded
    assert admin_conn.execute("SELECT bool_and(embedding IS NOT NULL) FROM scirag.kg_communities").fetchone()[0]
    assert admin_conn.execute("SELECT count(*) FROM scirag.kg_community_members").fetchone()[0] >= 2 * len(a)


def test_a_scoped_reader_sees_only_communities_all_of_whose_sources_it_may_see(
    demo_graph, loader_conn, reader_conn, admin_conn, embedder
):
    # readers reach evidence only through the API (reader wall): search_community,
    # search_community_chunks, documents_visible; the superuser checks the rows behind them
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)
    visible_docs = {r[0] for r in reader_conn.execute("SELECT document_id FROM scirag.documents_visible()")}
    from scirag_helpers.embedder import to_pgvector

    q = to_pgvector(embedder.embed(["Which residue does Harlan County supply?"])[0])
    seen = reader_conn.execute(
        "SELECT community_id, document_ids FROM scirag.search_community(%s::public.vector, 1000)", (q,)
    ).fetchall()
    assert seen and all(set(docs) <= visible_docs for _, docs in seen)
    hidden = admin_conn.execute(
        "SELECT id FROM scirag.kg_communities k WHERE NOT k.source_documents <@ %s::bigint[]", (sorted(visible_docs),)
    ).fetchall()
    assert hidden, "some community has a source outside the default scope"
    assert not {h[0] for h in hidden} & {s[0] for s in seen}
    # search_community answers from the broadest tier the reader may see: every license
    # class of the tier in its scope (the default public, open_commercial), every source visible
    tiers = {
        t
        for (t,) in admin_conn.execute(
            "SELECT tier FROM scirag.kg_communities WHERE id = ANY (%s)", ([s[0] for s in seen],)
        )
    }
    broadest = admin_conn.execute(
        """SELECT max(tier) FROM scirag.kg_communities
           WHERE tier_licenses <@ ARRAY['public', 'open_commercial'] AND source_documents <@ %s::bigint[]""",
        (sorted(visible_docs),),
    ).fetchone()[0]
    assert tiers == {broadest}
    chunks = [
        c
        for (c,) in reader_conn.execute(
            "SELECT chunk_id FROM scirag.search_community_chunks(%s::public.vector, 100)", (q,)
        )
    ]
    docs = {
        d
        for (d,) in admin_conn.execute("SELECT DISTINCT document_id FROM scirag.chunks WHERE id = ANY (%s)", (chunks,))
    }
    assert chunks and docs <= visible_docs


def test_model_summaries_fall_back_to_extractive_when_the_model_fails(demo_graph, loader_conn, admin_conn, embedder):
    client = RecordedClient({"in_order": list(RECORDINGS["summaries"])})
    stats = build_communities(loader_conn, DOMAIN, client, embedder=embedder)
    assert stats.model_summaries == 3
    assert stats.model_failures == stats.communities - 3 == stats.extractive_summaries
    methods = dict(
        admin_conn.execute("SELECT summary_method, count(*) FROM scirag.kg_communities GROUP BY 1").fetchall()
    )
    assert methods == {"recorded": 3, "extractive": stats.communities - 3}
    assert "Entities of one community" in client.seen[0]["prompt"]
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)  # leave the extractive build behind


# ---------------------------------------------------------------------------
# Tier-local names and grouping (issue 13 item 2)
# ---------------------------------------------------------------------------

RESTRICTED_NAME = "Nightjar Reserve Blend"
PLANT = "test-tier-local"


class EchoClient:
    """A 'model' whose summary is exactly what it was sent: a stored summary then
    shows everything a model would have seen."""

    name = "echo"

    def complete(self, prompt, **_kw):
        return "SENT: " + prompt


@pytest.fixture
def tier_local_graph(demo_graph, dsn, make_manifest, restore_corpus, embedder):
    """A public note and a restricted memo sharing entity A. A's canonical name is
    written only in the restricted memo (as when resolution keeps the survivor with
    the most mentions, or a model named it there); the public note calls it "grey
    straw pellets". Public edges A-B (1.0), A-C and B-C (0.4) make one community;
    the memo's restricted triangle C-X-Y pulls C away in the widest tier."""
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    manifest = make_manifest(
        [
            {
                "id": "tier-local-public",
                "title": "Quillon pellet note",
                "license": "public",
                "source": "test-tier",
                "text": "# Quillon pellet note\n\nThe Quillon Mill presses grey straw pellets. The Brisk depot stores grey "
                "straw pellets and parts for the Quillon Mill.",
            },
            {
                "id": "tier-local-restricted",
                "title": "Confidential blend memo",
                "license": "restricted",
                "source": "test-tier",
                "text": "# Confidential blend memo\n\nThe Nightjar Reserve Blend is our code name. The Brisk depot "
                "supplies the Osk Cartel and the Pell Syndicate, which trade with each other.",
            },
        ]
    )
    with db.connect(dsn, role="scirag_loader") as conn:
        ingest_manifest(conn, manifest, Ingester(conn, embedder=embedder))
        chunk = dict(
            conn.execute(
                """SELECT d.external_id, min(c.id) FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
               WHERE d.external_id LIKE 'tier-local-%' AND c.kind <> 'section' GROUP BY 1"""
            ).fetchall()
        )
        pub, res = chunk["tier-local-public"], chunk["tier-local-restricted"]
        ids = {}
        for key, name in [
            ("A", RESTRICTED_NAME),
            ("B", "Quillon Mill"),
            ("C", "Brisk depot"),
            ("X", "Osk Cartel"),
            ("Y", "Pell Syndicate"),
        ]:
            ids[key] = conn.execute(
                "INSERT INTO scirag.kg_entities (name, entity_type, extractor) "
                "VALUES (%s, 'Organization', %s) RETURNING id",
                (name, PLANT),
            ).fetchone()[0]
        mentions = [
            ("A", pub, "grey straw pellets", 2),
            ("A", res, RESTRICTED_NAME, 5),
            ("B", pub, "Quillon Mill", 2),
            ("C", pub, "Brisk depot", 1),
            ("C", res, "Brisk depot", 1),
            ("X", res, "Osk Cartel", 1),
            ("Y", res, "Pell Syndicate", 1),
        ]
        for key, chunk_id, surface, n in mentions:
            conn.execute(
                "INSERT INTO scirag.kg_mentions (entity_id, chunk_id, surface, occurrences, original_entity_id) "
                "VALUES (%s, %s, %s, %s, %s)",
                (ids[key], chunk_id, surface, n, ids[key]),
            )
        edges = [
            ("B", "A", pub, "The Quillon Mill presses grey straw pellets.", 1.0),
            ("C", "A", pub, "The Brisk depot stores grey straw pellets", 0.4),
            ("C", "B", pub, "parts for the Quillon Mill", 0.4),
            ("C", "X", res, "The Brisk depot supplies the Osk Cartel", 1.0),
            ("C", "Y", res, "supplies the Osk Cartel and the Pell Syndicate", 1.0),
            ("X", "Y", res, "the Osk Cartel and the Pell Syndicate, which trade with each other", 1.0),
        ]
        for s, t, chunk_id, phrase, conf in edges:
            conn.execute(
                "INSERT INTO scirag.kg_relationships (source_entity_id, target_entity_id, rel_type, phrase, "
                "confidence, extractor, chunk_id) VALUES (%s, %s, 'SUPPLIES', %s, %s, %s, %s)",
                (ids[s], ids[t], phrase, conf, PLANT, chunk_id),
            )
        conn.commit()
    yield ids
    with db.connect(dsn, role="scirag_loader") as conn:
        conn.execute("DELETE FROM scirag.documents WHERE external_id LIKE 'tier-local-%'")
        conn.execute("DELETE FROM scirag.kg_entities WHERE extractor = %s", (PLANT,))
        conn.commit()
        build_communities(conn, DOMAIN, None, embedder=embedder)  # leave the demo's extractive build behind


def reader_view(reader_conn, admin_conn, embedder) -> list[tuple]:
    """Everything a default-scope reader gets from the community layer: (title,
    summary, source documents, members) of each community search_community returns."""
    from scirag_helpers.embedder import to_pgvector

    q = to_pgvector(embedder.embed(["Which depot stores the pellets of the Quillon Mill?"])[0])
    rows = reader_conn.execute(
        "SELECT community_id, summary, document_ids FROM scirag.search_community(%s::public.vector, 1000)", (q,)
    ).fetchall()
    titles = dict(
        admin_conn.execute(
            "SELECT id, title FROM scirag.kg_communities WHERE id = ANY (%s)", ([r[0] for r in rows],)
        ).fetchall()
    )
    members = dict(
        admin_conn.execute(
            "SELECT community_id, array_agg(entity_id ORDER BY entity_id) "
            "FROM scirag.kg_community_members WHERE community_id = ANY (%s) GROUP BY 1",
            ([r[0] for r in rows],),
        ).fetchall()
    )
    return sorted((titles[cid], summary, sorted(docs), members[cid]) for cid, summary, docs in rows)


def test_community_names_come_from_the_tier_and_sources_never_from_restricted_text(
    tier_local_graph, loader_conn, reader_conn, admin_conn, embedder
):
    ids = tier_local_graph
    build_communities(loader_conn, DOMAIN, EchoClient(), embedder=embedder)
    view = reader_view(reader_conn, admin_conn, embedder)
    ours = [v for v in view if ids["A"] in v[3]]
    assert ours, "the public community of the planted entities reaches the reader"
    # the shared entity is named as the public note writes it, in the title and in
    # everything the model was sent (the echoed summary)
    assert all("grey straw pellets" in title and "grey straw pellets" in summary for title, summary, _, _ in ours)
    for title, summary, _docs, _members in view:
        assert RESTRICTED_NAME not in title and RESTRICTED_NAME not in summary
        assert "Osk Cartel" not in summary and "Pell Syndicate" not in summary
    # the widest tier still names it (its readers may see the memo)
    wide = admin_conn.execute(
        "SELECT string_agg(title || summary, ' ') FROM scirag.kg_communities WHERE 'restricted' = ANY (tier_licenses)"
    ).fetchone()[0]
    assert "Osk Cartel" in wide


def test_what_a_reader_sees_of_communities_does_not_depend_on_restricted_documents(
    tier_local_graph, loader_conn, reader_conn, admin_conn, embedder
):
    ids = tier_local_graph
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)
    with_memo = reader_view(reader_conn, admin_conn, embedder)
    # the restricted triangle split C from A and B in the widest tier only
    wide = admin_conn.execute(
        """SELECT array_agg(m.entity_id ORDER BY m.entity_id) FROM scirag.kg_community_members m
           JOIN scirag.kg_communities k ON k.id = m.community_id
           WHERE 'restricted' = ANY (k.tier_licenses) AND %s = ANY (ARRAY(SELECT entity_id FROM scirag.kg_community_members
                                                                        WHERE community_id = k.id))
           GROUP BY k.id""",
        (ids["A"],),
    ).fetchall()
    assert wide == [(sorted([ids["A"], ids["B"]]),)]
    admin_conn.execute("DELETE FROM scirag.documents WHERE external_id = 'tier-local-restricted'")
    build_communities(loader_conn, DOMAIN, None, embedder=embedder)
    without_memo = reader_view(reader_conn, admin_conn, embedder)
    assert with_memo == without_memo
    assert any(sorted([ids["A"], ids["B"], ids["C"]]) == m for *_, m in with_memo)
