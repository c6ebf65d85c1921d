"""The pytest suites by area: every test module belongs to one area, and each area is
a pytest marker, so one area runs alone (``pytest -m library``, or
``scripts/test.sh -m library``). docs/testing.md gives each area's runtime.

A new test module is added to AREAS; one left out runs under the marker ``unsorted``."""

from __future__ import annotations

from pathlib import Path

AREAS = {
    "answers": "answers, their checks and forms, the evaluation harness and its metrics",
    "retrieval": "keyword (BM25), vector, deep stages, presets and profiles, the embedder, sentence rules",
    "library": "ingest, parsing (PDF engines, metadata), chunking, manifests, Crossref, doctor and gc",
    "graph": "knowledge graph: ontology, extraction, entity resolution, communities, multi-hop",
    "server": "the HTTP door: REST, MCP, keys, modes, the web page",
    "campaigns": "literature campaigns and screening",
    "security": "adversarial inputs, hidden ids, statement timeouts",
    "scale": "replicas, pgbouncer, query plans at scale",
    "project": "install, CLI, generated docs, release check, catalog equality",
    "unsorted": "test modules not yet given an area (add them to AREAS_OF_MODULES)",
}

_PREFIXES = {
    "test_answer_": "answers",
    "test_eval_": "answers",
    "test_deep_": "retrieval",
    "test_graph_": "graph",
    "test_server": "server",
    "test_campaign": "campaigns",
    "test_crossref": "library",
    "test_pdf": "library",
    "test_ingest": "library",
    "test_doctor": "library",
}
AREAS_OF_MODULES = {
    "test_qasper_metric": "answers",
    "test_words": "answers",
    "test_bm25": "retrieval",
    "test_keyword_fuzz": "retrieval",
    "test_hyde_prf": "retrieval",
    "test_profile_weights": "retrieval",
    "test_embedder": "retrieval",
    "test_text": "retrieval",
    "test_library": "library",
    "test_parse": "library",
    "test_chunk": "library",
    "test_manifest": "library",
    "test_screening": "campaigns",
    "test_security_adversarial": "security",
    "test_statement_timeout": "security",
    "test_replica_standby": "scale",
    "test_pgbouncer": "scale",
    "test_scale_plans": "scale",
    "test_install": "project",
    "test_cli": "project",
    "test_cli_docs": "project",
    "test_doc_commands": "project",
    "test_doc_inline_commands": "project",
    "test_cli_help_width": "project",
    "test_release": "project",
    "test_catalog_compare": "project",
    "test_sql_sources": "project",
}


def area_of(path: str | Path) -> str:
    """The area of a test module (by its file name)."""
    stem = Path(path).stem
    if stem in AREAS_OF_MODULES:
        return AREAS_OF_MODULES[stem]
    return next((area for prefix, area in _PREFIXES.items() if stem.startswith(prefix)), "unsorted")


def pytest_configure(config):
    for name, what in AREAS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        item.add_marker(getattr(pytest.mark, area_of(item.path)))
