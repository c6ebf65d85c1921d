"""domain.yaml: the shipped ontology loads; a broken one fails with errors that name the line."""

from __future__ import annotations

import textwrap

import pytest

from scirag.graph.ontology import OntologyError, load_domain, parse_domain

GOOD = textwrap.dedent("""\
    name: tiny
    ontology:
      entity_types:
        Crop:
          description: "A cultivated crop."
        Residue:
          description: "What a crop leaves."
          patterns: ['\\b[a-z]+ straw\\b']
      relation_types:
        PRODUCES:
          description: "A crop leaves a residue."
          source: Crop
          target: Residue
          cues: ["Straw From"]
    entities:
      - {name: "wheat", type: Crop, aliases: ["winter wheat"]}
    graph:
      rank_by: confidence
      min_confidence: 0.7
      citation_hop: true
      community_tiers: [[public], [public, restricted]]
    """)


def errors_of(text: str) -> list[str]:
    with pytest.raises(OntologyError) as info:
        parse_domain(text, "domain.yaml")
    return info.value.errors


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_shipped_demo_domain_is_a_real_ontology():
    d = load_domain()
    assert len(d.entity_types) == 8 and len(d.relation_types) == 10
    assert {"Crop", "Residue", "County", "Property"} <= set(d.entity_types)
    assert all(t.description for t in d.entity_types.values())
    for r in d.relation_types.values():
        assert r.source in d.entity_types and r.target in d.entity_types and r.cues and r.description
    assert len(d.entities) >= 50
    assert d.graph.rank_by == "hops" and d.graph.min_confidence is None and d.graph.citation_hop is False
    assert d.graph.community_tiers[0] == ("public",)


def test_good_file_parses_with_options():
    d = parse_domain(GOOD)
    assert d.relation_types["PRODUCES"].cues == ["straw from"]  # cues are matched in lower case
    assert d.entity_types["Residue"].patterns == [r"\b[a-z]+ straw\b"]
    assert d.graph.rank_by == "confidence" and d.graph.min_confidence == 0.7 and d.graph.citation_hop
    assert d.graph.community_tiers == [("public",), ("public", "restricted")]
    assert d.graph.as_db_options()["min_confidence"] == "0.7"
    assert d.graph.as_db_options()["citation_hop"] == "on"


def test_unknown_relation_endpoint_names_its_line():
    bad = GOOD.replace("target: Residue", "target: Residues")
    errs = errors_of(bad)
    assert errs == [
        f"domain.yaml:{line_of(bad, 'target: Residues')}: relation PRODUCES: target type "
        "'Residues' is not a declared entity type"
    ]


def test_missing_description_and_unknown_key_and_bad_pattern_are_all_reported():
    bad = GOOD.replace('      description: "A cultivated crop."\n', '      descripton: "typo"\n').replace(
        r"['\b[a-z]+ straw\b']", "['(unclosed']"
    )
    errs = errors_of(bad)
    assert any(
        e.startswith(f"domain.yaml:{line_of(bad, 'descripton')}:") and "unknown key 'descripton'" in e for e in errs
    )
    assert any("entity type Crop: missing description" in e for e in errs)
    assert any(
        e.startswith(f"domain.yaml:{line_of(bad, '(unclosed')}:") and "not a valid regular expression" in e
        for e in errs
    )


def test_entity_of_undeclared_type_and_duplicates():
    bad = GOOD.replace(
        '  - {name: "wheat", type: Crop, aliases: ["winter wheat"]}',
        '  - {name: "wheat", type: Crop}\n  - {name: "Wheat", type: Crop}\n  - {name: "barley", type: Grain}',
    )
    errs = errors_of(bad)
    assert (
        f"domain.yaml:{line_of(bad, 'type: Grain')}: entity barley: type 'Grain' is not a declared entity type" in errs
    )
    assert any(e.startswith(f"domain.yaml:{line_of(bad, 'Wheat')}:") and "declared twice" in e for e in errs)


def test_graph_options_are_validated():
    bad = GOOD.replace("rank_by: confidence", "rank_by: pagerank").replace("min_confidence: 0.7", "min_confidence: 0.5")
    bad = bad.replace("[[public], [public, restricted]]", "[[public, restricted], [public]]")
    errs = errors_of(bad)
    assert any(e.startswith(f"domain.yaml:{line_of(bad, 'rank_by')}:") for e in errs)
    assert any(e.startswith(f"domain.yaml:{line_of(bad, 'min_confidence')}:") for e in errs)
    assert any("each tier must add license classes" in e for e in errs)


def test_yaml_syntax_error_names_the_line():
    bad = GOOD.replace("source: Crop", "source: [Crop")
    errs = errors_of(bad)
    assert len(errs) == 1 and errs[0].startswith("domain.yaml:") and "not valid YAML" in errs[0]


def test_missing_ontology_section():
    assert errors_of("name: x\n") == ["domain.yaml:1: missing 'ontology' section (entity_types and relation_types)"]


def test_an_unknown_top_level_section_names_its_line():
    bad = GOOD + "query_classes:\n  DEFINITION: [what is]\n"
    errs = errors_of(bad)
    assert len(errs) == 1 and errs[0].startswith(f"domain.yaml:{line_of(bad, 'query_classes:')}: ")
    assert "query_classes" in errs[0]
