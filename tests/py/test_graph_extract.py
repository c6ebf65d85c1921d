"""Graph extraction: the offline ontology-driven extractor, validation of model
output (recorded responses, malformed ones included) and incremental, merging
storage against the scirag_pytest database."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from scirag.graph.extract import ModelExtractor, run_extract, validate_model_output
from scirag.graph.offline import OfflineExtractor
from scirag.graph.ontology import load_domain
from scirag.ingest.manifest import read_manifest
from scirag_helpers.llm import RecordedClient
from scirag_helpers.text import chunk_content

from conftest import DEMO_MANIFEST

RECORDINGS = json.loads((Path(__file__).parent / "recordings" / "graph_extract.json").read_text())
DOMAIN = load_domain()
DEMO_IDS = [e.id for _, e in read_manifest(DEMO_MANIFEST)]


def rels(ex):
    return {(r.type, r.source[0], r.target[0]): r for r in ex.relations.values()}


# ---------------------------------------------------------------------------
# Offline extractor (no database)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def offline():
    return OfflineExtractor(DOMAIN)


def test_direct_statement_is_1_0_with_the_quoted_sentence(offline):
    ex = offline.extract(
        "Lomax County is the only county in the basin that grows rice, and rice straw is "
        "the principal residue of Lomax County."
    )
    r = rels(ex)
    assert r[("AVAILABLE_IN", "rice straw", "Lomax County")].confidence == 1.0
    assert r[("GROWN_IN", "rice", "Lomax County")].confidence == 1.0
    assert (
        "rice straw is the principal residue of Lomax County"
        in r[("AVAILABLE_IN", "rice straw", "Lomax County")].phrase
    )


def test_nearest_mention_rule_and_implication(offline):
    r = rels(offline.extract("Rice straw dominates in Lomax County and wheat straw in Merriweather County."))
    assert r[("AVAILABLE_IN", "rice straw", "Lomax County")].confidence == 1.0
    assert ("AVAILABLE_IN", "rice straw", "Merriweather County") not in r  # Lomax County sits in between
    assert r[("AVAILABLE_IN", "wheat straw", "Merriweather County")].confidence == 0.7  # cue elsewhere in the sentence


def test_no_cue_no_relationship(offline):
    ex = offline.extract(
        "Corn stover (Osgood County), rice straw (Lomax County) and wheat straw "
        "(Merriweather County) are the three largest streams."
    )
    assert not [r for r in ex.relations.values() if r.type == "AVAILABLE_IN"]
    assert {("corn stover", "Residue"), ("Osgood County", "County")} <= set(ex.entities)


def test_table_row_and_header_give_strong_implications(offline):
    body = "Residue | n | Lignin | Ash\nWheat straw | 24 | 18.9 | 6.3\nBarley straw | 18 | 17.1 | 5.4"
    r = rels(offline.extract(chunk_content("Composition study", "3 Results", body), body))
    edge = r[("HAS_PROPERTY", "barley straw", "ash content")]
    assert edge.confidence == 0.7
    assert "Residue | n | Lignin | Ash" in edge.phrase and "Barley straw | 18 | 17.1 | 5.4" in edge.phrase
    assert ("HAS_PROPERTY", "wheat straw", "lignin content") in r


def test_inference_across_sentences_is_0_4(offline):
    r = rels(offline.extract("Barley straw was sampled from eighteen bales. It contains the most chlorine of all."))
    assert r[("HAS_PROPERTY", "barley straw", "chlorine content")].confidence == 0.4


def test_title_line_is_a_unit_and_aliases_are_kept_as_written(offline):
    body = "Corn stover (also called maize stover in the literature) was not burned."
    ex = offline.extract(chunk_content("Emission Factors for Open-Field Burning of Rice Straw", "Results", body), body)
    r = rels(ex)
    assert r[("CHARACTERIZED_BY", "open-field burning", "PM2.5 emission factor")].confidence == 1.0
    assert r[("CONVERTED_BY", "rice straw", "open-field burning")].confidence == 1.0
    assert set(ex.entities[("corn stover", "Residue")].surfaces) == {"Corn stover", "maize stover"}
    assert set(ex.entities[("PM2.5 emission factor", "Property")].surfaces) == {"Emission Factors"}


def test_a_chunk_without_a_head_is_all_body(offline):
    """No title or section: the first paragraph is body, its two sentences give the
    cross-sentence inference (0.4), not a header line's 1.0 (issue 16: the stored body
    says where the head ends, nothing guesses it)."""
    body = "Barley straw was sampled from eighteen bales. It contains the most chlorine of all.\n\nThe bales were dry."
    r = rels(offline.extract(chunk_content(None, None, body), body))
    assert r[("HAS_PROPERTY", "barley straw", "chlorine content")].confidence == 0.4


def test_acronyms_match_case_sensitively(offline):
    ex = offline.extract("Barley vs wheat: the VS fraction was 93 %.")
    assert ex.entities[("volatile solids", "Property")].surfaces == {"VS": 1}


# ---------------------------------------------------------------------------
# Validation of model output (recorded responses)
# ---------------------------------------------------------------------------

CHUNK1 = (
    "Depot Note\nResults\n\nThe Fenwick depot receives only corn stover bales. Corn stover gave 0.263 m3 CH4 per kg VS."
)


def test_valid_answer_keeps_only_what_the_ontology_and_passage_support():
    ex = validate_model_output(DOMAIN, CHUNK1, RECORDINGS["first_run"][0])
    assert not ex.malformed
    assert set(ex.entities) == {("Fenwick depot", "Organization"), ("corn stover", "Residue"), ("methane", "Product")}
    assert set(ex.entities[("methane", "Product")].surfaces) == {"CH4"}  # the name is not in the passage
    assert "maize stover" not in ex.entities[("corn stover", "Residue")].surfaces  # an alias the passage lacks
    (edge,) = ex.relations.values()
    assert (edge.type, edge.source, edge.target) == (
        "HANDLED_BY",
        ("corn stover", "Residue"),
        ("Fenwick depot", "Organization"),
    )
    assert edge.confidence == 1.0  # the reversed duplicate (0.95) was re-oriented, snapped to 1.0, and wins
    assert dict(ex.dropped) == {
        "unknown_entity_type": 1,
        "entity_not_in_source": 1,
        "dangling_endpoint": 2,
        "unknown_relation_type": 1,
        "endpoint_type_mismatch": 1,
        "bad_confidence": 1,
        "phrase_not_in_source": 1,
        "malformed_relationship": 1,
    }


@pytest.mark.parametrize(
    "raw, reason",
    [
        (RECORDINGS["first_run"][1], "malformed_json"),
        (RECORDINGS["first_run"][2], "malformed_shape"),
        ('{"entities": "corn stover"}', "malformed_shape"),
        ("", "malformed_json"),
    ],
)
def test_malformed_answers_are_dropped_and_counted(raw, reason):
    ex = validate_model_output(DOMAIN, CHUNK1, raw)
    assert ex.malformed and not ex.entities and not ex.relations
    assert dict(ex.dropped) == {reason: 1}


def test_fenced_json_is_accepted():
    ex = validate_model_output(DOMAIN, "Quux content of sorghum straw was high.", RECORDINGS["second_run"][0])
    assert not ex.malformed and len(ex.relations) == 1


def test_model_extractor_turns_a_failing_model_into_a_counted_failure():
    ext = ModelExtractor(DOMAIN, RecordedClient({"in_order": []}))
    ex = ext.extract(CHUNK1)
    assert ex.malformed and dict(ex.dropped) == {"model_error": 1}


def test_prompt_carries_the_ontology():
    client = RecordedClient({"in_order": ['{"entities": [], "relationships": []}']})
    ModelExtractor(DOMAIN, client).extract(CHUNK1)
    seen = client.seen[0]
    assert seen["json_mode"] and seen["temperature"] == 0.0
    assert "HANDLED_BY (Residue -> Organization)" in seen["prompt"] and CHUNK1 in seen["prompt"]


# ---------------------------------------------------------------------------
# Storage (database)
# ---------------------------------------------------------------------------


def demo_doc_ids(conn):
    return [
        r[0]
        for r in conn.execute("SELECT id FROM scirag.documents WHERE external_id = ANY (%s)", (DEMO_IDS,)).fetchall()
    ]


@pytest.fixture(scope="module")
def demo_graph(dsn, demo_corpus):
    """The demo corpus, extracted offline (idempotent: only pending chunks are read)."""
    from scirag import db

    with db.connect(dsn, role="scirag_loader") as conn:
        return run_extract(conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo_doc_ids(conn))


def edge(conn, rel, src, tgt, phrase_part=""):
    """(confidence, phrase, extractor) of the strongest such edge whose phrase contains phrase_part."""
    return conn.execute(
        """SELECT r.confidence, r.phrase, r.extractor FROM scirag.kg_relationships r
           JOIN scirag.kg_entities s ON s.id = r.source_entity_id JOIN scirag.kg_entities t ON t.id = r.target_entity_id
           WHERE r.rel_type = %s AND s.name = %s AND t.name = %s AND strpos(r.phrase, %s) > 0
           ORDER BY r.confidence DESC, r.id LIMIT 1""",
        (rel, src, tgt, phrase_part),
    ).fetchone()


def test_demo_corpus_graph_holds_the_planted_chains(demo_graph, admin_conn):
    assert demo_graph.failed == 0 and not demo_graph.dropped
    conf, _, extractor = edge(
        admin_conn, "AVAILABLE_IN", "barley straw", "Harlan County", "Harlan County's principal residue is barley straw"
    )
    assert (conf, extractor) == (1.0, "ontology")
    assert (
        edge(
            admin_conn,
            "HANDLED_BY",
            "corn stover",
            "Fenwick depot",
            "The Fenwick depot in Osgood County receives only corn stover bales",
        )[0]
        == 1.0
    )
    assert (
        edge(
            admin_conn,
            "AVAILABLE_IN",
            "rice straw",
            "Lomax County",
            "rice straw is the principal residue of Lomax County",
        )[0]
        == 1.0
    )
    # every line of every relationship's phrase is quoted from its own chunk (whitespace aside)
    assert (
        admin_conn.execute(
            """SELECT count(*) FROM scirag.kg_relationships r JOIN scirag.chunks c ON c.id = r.chunk_id,
                unnest(string_to_array(r.phrase, E'\\n')) AS line
           WHERE position(line IN regexp_replace(c.content, '\\s+', ' ', 'g')) = 0"""
        ).fetchone()[0]
        == 0
    )
    assert set(
        r[0]
        for r in admin_conn.execute(
            "SELECT DISTINCT confidence FROM scirag.kg_relationships WHERE extractor = 'ontology'"
        )
    ) <= {1.0, 0.7, 0.4}


def test_demo_citations_are_resolved(demo_graph, admin_conn):
    rows = admin_conn.execute(
        """SELECT a.external_id, b.external_id FROM scirag.document_citations c
           JOIN scirag.documents a ON a.id = c.document_id JOIN scirag.documents b ON b.id = c.cited_document_id
           WHERE a.external_id = ANY (%s)""",
        (DEMO_IDS,),
    ).fetchall()
    assert {
        ("county-straw-2022", "rpr-review"),
        ("county-straw-2022", "soc-retention"),
        ("logistics-cost", "county-straw-2022"),
        ("pellet-trial", "residue-composition"),
    } <= set(rows)


def test_aliases_are_surfaces_actually_present_in_the_source(demo_graph, admin_conn):
    aliases = admin_conn.execute(
        "SELECT aliases FROM scirag.kg_entities WHERE name = 'corn stover' AND entity_type = 'Residue'"
    ).fetchone()[0]
    assert "maize stover" in aliases
    missing = admin_conn.execute(
        """SELECT e.name, a FROM scirag.kg_entities e, unnest(e.aliases) a
           WHERE e.extractor = 'ontology' AND NOT EXISTS (
             SELECT 1 FROM scirag.kg_mentions m JOIN scirag.chunks c ON c.id = m.chunk_id
             WHERE m.entity_id = e.id AND strpos(c.content, a) > 0)"""
    ).fetchall()
    assert missing == []


def test_mentions_carry_their_chunks_scope(demo_graph, admin_conn):
    assert (
        admin_conn.execute(
            """SELECT count(*) FROM scirag.kg_mentions m JOIN scirag.chunks c ON c.id = m.chunk_id
           WHERE (m.document_id, m.license, m.source, m.retracted) IS DISTINCT FROM
                 (c.document_id, c.license, c.source, c.retracted)"""
        ).fetchone()[0]
        == 0
    )


def test_extraction_is_incremental(demo_graph, loader_conn):
    again = run_extract(loader_conn, DOMAIN, OfflineExtractor(DOMAIN), document_ids=demo_doc_ids(loader_conn))
    assert again.chunks == 0


def test_offline_re_extraction_changes_nothing(demo_graph, loader_conn, admin_conn):
    before = admin_conn.execute("SELECT count(*), sum(confidence) FROM scirag.kg_relationships").fetchone()
    run_extract(loader_conn, DOMAIN, OfflineExtractor(DOMAIN), all_chunks=True, document_ids=demo_doc_ids(loader_conn))
    assert admin_conn.execute("SELECT count(*), sum(confidence) FROM scirag.kg_relationships").fetchone() == before


@pytest.fixture
def depot_note(dsn, demo_graph, make_manifest, restore_corpus, embedder):
    """A three-chunk document for model extraction; removed after the test."""
    from scirag import db
    from scirag.ingest.pipeline import Ingester, ingest_manifest

    text = (
        "# Depot Note\n\n## Results\n\nThe Fenwick depot receives only corn stover bales. "
        "Corn stover gave 0.263 m3 CH4 per kg VS.\n\n## Other\n\nQuux content of sorghum straw was high.\n\n"
        f"## Third\n\nBarley straw contains chlorine.\n\n<!-- {uuid.uuid4().hex} -->\n"
    )
    manifest = make_manifest(
        [
            {
                "id": f"depot-note-{uuid.uuid4().hex[:8]}",
                "text": text,
                "format": "markdown",
                "title": "Depot Note",
                "license": "public",
                "source": "test",
            }
        ]
    )
    with db.connect(dsn, role="scirag_loader") as conn:
        ingest_manifest(conn, manifest, Ingester(conn, embedder=embedder))
        doc = conn.execute("SELECT max(id) FROM scirag.documents").fetchone()[0]
        n = conn.execute(
            "SELECT count(*) FROM scirag.chunks WHERE document_id = %s AND kind <> 'section'", (doc,)
        ).fetchone()[0]
    assert n == 3
    return doc


def test_model_extraction_stores_valid_output_and_never_malformed(depot_note, loader_conn, admin_conn):
    client = RecordedClient({"in_order": list(RECORDINGS["first_run"])})
    stats = run_extract(loader_conn, DOMAIN, ModelExtractor(DOMAIN, client), document_ids=[depot_note])
    assert (stats.chunks, stats.extracted, stats.failed) == (3, 1, 2)
    assert stats.dropped["malformed_json"] == 1 and stats.dropped["malformed_shape"] == 1
    assert stats.dropped["unknown_entity_type"] == 1 and stats.dropped["dangling_endpoint"] == 2
    pending = admin_conn.execute(
        "SELECT count(*) FROM scirag.chunks WHERE document_id = %s AND kind <> 'section' "
        "AND graph_extracted_at IS NULL",
        (depot_note,),
    ).fetchone()[0]
    assert pending == 2, "a chunk whose answer was malformed stays pending"
    stored = admin_conn.execute(
        """SELECT r.rel_type, r.confidence, r.extractor FROM scirag.kg_relationships r WHERE r.document_id = %s""",
        (depot_note,),
    ).fetchall()
    assert stored == [("HANDLED_BY", 1.0, "recorded")]
    assert (
        admin_conn.execute(
            "SELECT count(*) FROM scirag.kg_mentions WHERE document_id = %s AND surface ILIKE '%%sorghum%%'",
            (depot_note,),
        ).fetchone()[0]
        == 0
    )
    assert admin_conn.execute("SELECT count(*) FROM scirag.kg_entities WHERE name = 'Warp drive'").fetchone()[0] == 0

    # the next run reads only the two pending chunks
    client = RecordedClient({"in_order": list(RECORDINGS["second_run"])})
    stats = run_extract(loader_conn, DOMAIN, ModelExtractor(DOMAIN, client), document_ids=[depot_note])
    assert (stats.chunks, stats.extracted, stats.failed) == (2, 2, 0)
    assert edge(admin_conn, "HAS_PROPERTY", "sorghum straw", "quux content")[0] == 0.7


def test_re_extraction_merges_aliases_and_keeps_the_highest_confidence(depot_note, loader_conn, admin_conn):
    first = RecordedClient({"in_order": [RECORDINGS["first_run"][0]] + RECORDINGS["second_run"]})
    run_extract(loader_conn, DOMAIN, ModelExtractor(DOMAIN, first), document_ids=[depot_note])

    def stored():
        return admin_conn.execute(
            """SELECT r.confidence, r.phrase FROM scirag.kg_relationships r
               WHERE r.document_id = %s AND r.rel_type = 'HANDLED_BY'""",
            (depot_note,),
        ).fetchall()

    assert stored() == [(1.0, "The Fenwick depot receives only corn stover bales")]
    again = RecordedClient({"in_order": list(RECORDINGS["reextract"])})
    for _ in range(2):
        run_extract(loader_conn, DOMAIN, ModelExtractor(DOMAIN, again), all_chunks=True, document_ids=[depot_note])
    # one row for the typed edge on this chunk; 1.0 survives a later 0.4; the phrase of the best stays
    assert stored() == [(1.0, "The Fenwick depot receives only corn stover bales")]
    aliases = admin_conn.execute(
        "SELECT aliases FROM scirag.kg_entities WHERE name = 'Fenwick depot' AND entity_type = 'Organization'"
    ).fetchone()[0]
    assert "Depot" in aliases and "Fenwick depot" in aliases  # as the passage first writes it
