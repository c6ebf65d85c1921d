"""The domain ontology: entity types, relation types, declared entities and graph
options from domain/domain.yaml, validated on load.

Every error names the file and line of the offending node, so a typo in a
relation's source type reads ``domain.yaml:58: relation GROWN_IN: source type
'Crops' is not a declared entity type``. All errors are collected and reported
together.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from scirag.db import ROOT

LICENSES = ("public", "open_commercial", "open_noncommercial", "restricted", "unknown")
CONFIDENCES = (1.0, 0.7, 0.4)
DEFAULT_TIERS = (
    ("public",),
    ("public", "open_commercial"),
    ("public", "open_commercial", "open_noncommercial"),
    LICENSES,
)
TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9_]*$")
REL_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


class OntologyError(ValueError):
    """domain.yaml does not describe a usable ontology; ``errors`` lists "file:line: message" strings."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("invalid domain file:\n  " + "\n  ".join(errors))


@dataclass
class EntityType:
    name: str
    description: str
    patterns: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class RelationType:
    name: str
    description: str
    source: str
    target: str
    cues: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class DeclaredEntity:
    name: str
    type: str
    aliases: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class GraphOptions:
    rank_by: str = "hops"
    min_confidence: float | None = None
    citation_hop: bool = False
    question_entities: str = "offline"
    max_seeds: int = 10
    max_fanout: int = 20
    max_entities: int = 400
    mentions_per_entity: int = 40
    community_top: int = 3
    community_min_size: int = 2
    community_tiers: list[tuple[str, ...]] = field(default_factory=lambda: [tuple(t) for t in DEFAULT_TIERS])

    def as_db_options(self) -> dict[str, str]:
        """The options search_graph and search_community read (scirag.kg_options)."""
        return {
            "rank_by": self.rank_by,
            "min_confidence": "" if self.min_confidence is None else str(self.min_confidence),
            "citation_hop": "on" if self.citation_hop else "off",
            "question_entities": self.question_entities,
            "max_seeds": str(self.max_seeds),
            "max_fanout": str(self.max_fanout),
            "max_entities": str(self.max_entities),
            "mentions_per_entity": str(self.mentions_per_entity),
            "community_top": str(self.community_top),
        }


@dataclass
class Domain:
    name: str
    path: Path
    entity_types: dict[str, EntityType]
    relation_types: dict[str, RelationType]
    entities: list[DeclaredEntity]
    graph: GraphOptions

    def relation_for(self, src_type: str, tgt_type: str) -> list[RelationType]:
        return [r for r in self.relation_types.values() if r.source == src_type and r.target == tgt_type]


def default_domain_path() -> Path:
    return Path(os.environ.get("SCIRAG_DOMAIN", str(ROOT / "domain" / "domain.yaml")))


# ---------------------------------------------------------------------------
# Validation over the YAML node tree (nodes carry their line numbers)
# ---------------------------------------------------------------------------


class _Checker:
    def __init__(self, path: Path):
        self.path = path
        self.errors: list[str] = []

    def err(self, node, msg: str) -> None:
        line = node.start_mark.line + 1 if node is not None else 1
        self.errors.append(f"{self.path.name}:{line}: {msg}")

    def mapping(self, node, what: str) -> list[tuple[yaml.Node, yaml.Node]] | None:
        if not isinstance(node, yaml.MappingNode):
            self.err(node, f"{what} must be a mapping")
            return None
        seen: dict[str, int] = {}
        for k, _ in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            if key in seen:
                self.err(k, f"{what}: key '{key}' appears twice (first on line {seen[key]})")
            elif key is not None:
                seen[key] = k.start_mark.line + 1
        return node.value

    def get(self, node, key: str):
        for k, v in node.value if isinstance(node, yaml.MappingNode) else []:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
        return None

    def string(self, node, what: str, required: bool = True, one_line: bool = False) -> str | None:
        if node is None:
            return None
        if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:str" or not node.value.strip():
            if required or node is not None:
                self.err(node, f"{what} must be a non-empty string")
            return None
        if one_line and "\n" in node.value.strip():
            self.err(node, f"{what} must be one line")
        return node.value.strip()

    def string_list(self, node, what: str) -> list[str]:
        if node is None:
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.err(node, f"{what} must be a list of strings")
            return []
        out = []
        for item in node.value:
            s = self.string(item, f"{what} item")
            if s is not None:
                out.append(s)
        return out

    def unknown_keys(self, node, allowed: set[str], what: str) -> None:
        for k, _ in node.value if isinstance(node, yaml.MappingNode) else []:
            if isinstance(k, yaml.ScalarNode) and k.value not in allowed:
                self.err(k, f"{what}: unknown key '{k.value}' (allowed: {', '.join(sorted(allowed))})")


def load_domain(path: str | Path | None = None) -> Domain:
    """Reads and validates a domain file; raises OntologyError naming every bad line."""
    p = Path(path) if path else default_domain_path()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise OntologyError([f"{p}: cannot read domain file ({exc.strerror})"]) from None
    return parse_domain(text, p)


def parse_domain(text: str, path: Path | str = "domain.yaml") -> Domain:
    path = Path(path)
    ck = _Checker(path)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise OntologyError([f"{path.name}:{line}: not valid YAML ({exc.problem})"]) from None
    if root is None or not isinstance(root, yaml.MappingNode):
        raise OntologyError([f"{path.name}:1: the domain file must be a mapping with an 'ontology' section"])
    if ck.mapping(root, "domain file") is not None:
        # every top-level key is read: anything else is a typo or a section nothing reads
        ck.unknown_keys(root, {"name", "ontology", "entities", "graph"}, "domain file")
    name = ck.string(ck.get(root, "name"), "name", required=False) or path.stem

    onto = ck.get(root, "ontology")
    entity_types: dict[str, EntityType] = {}
    relation_types: dict[str, RelationType] = {}
    if onto is None:
        ck.err(root, "missing 'ontology' section (entity_types and relation_types)")
    elif ck.mapping(onto, "ontology") is not None:
        ck.unknown_keys(onto, {"entity_types", "relation_types"}, "ontology")
        et = ck.get(onto, "entity_types")
        if et is None:
            ck.err(onto, "ontology: missing 'entity_types'")
        elif ck.mapping(et, "ontology.entity_types") is not None:
            if not et.value:
                ck.err(et, "ontology.entity_types: declare at least one entity type")
            for k, v in et.value:
                tname = k.value
                if not TYPE_NAME.match(str(tname)):
                    ck.err(k, f"entity type '{tname}': names start with a capital letter (letters, digits, _)")
                if ck.mapping(v, f"entity type {tname}") is None:
                    continue
                ck.unknown_keys(v, {"description", "patterns"}, f"entity type {tname}")
                desc = ck.string(ck.get(v, "description"), f"entity type {tname}: description", one_line=True)
                if ck.get(v, "description") is None:
                    ck.err(v, f"entity type {tname}: missing description")
                pnode = ck.get(v, "patterns")
                patterns = ck.string_list(pnode, f"entity type {tname}: patterns")
                if isinstance(pnode, yaml.SequenceNode):
                    for item in pnode.value:
                        try:
                            re.compile(str(item.value))
                        except re.error as exc:
                            ck.err(item, f"entity type {tname}: pattern is not a valid regular expression ({exc})")
                entity_types[tname] = EntityType(tname, desc or "", patterns, k.start_mark.line + 1)
        rt = ck.get(onto, "relation_types")
        if rt is None:
            ck.err(onto, "ontology: missing 'relation_types'")
        elif ck.mapping(rt, "ontology.relation_types") is not None:
            for k, v in rt.value:
                rname = k.value
                if not REL_NAME.match(str(rname)):
                    ck.err(k, f"relation type '{rname}': names are UPPER_CASE (letters, digits, _)")
                if ck.mapping(v, f"relation {rname}") is None:
                    continue
                ck.unknown_keys(v, {"description", "source", "target", "cues"}, f"relation {rname}")
                if ck.get(v, "description") is None:
                    ck.err(v, f"relation {rname}: missing description")
                desc = ck.string(ck.get(v, "description"), f"relation {rname}: description", one_line=True)
                ends = {}
                for end in ("source", "target"):
                    node = ck.get(v, end)
                    if node is None:
                        ck.err(v, f"relation {rname}: missing {end} type")
                        continue
                    t = ck.string(node, f"relation {rname}: {end}")
                    if t is not None and t not in entity_types:
                        ck.err(node, f"relation {rname}: {end} type '{t}' is not a declared entity type")
                    ends[end] = t
                cues = [c.lower() for c in ck.string_list(ck.get(v, "cues"), f"relation {rname}: cues")]
                relation_types[rname] = RelationType(
                    rname, desc or "", ends.get("source") or "", ends.get("target") or "", cues, k.start_mark.line + 1
                )

    entities: list[DeclaredEntity] = []
    ents = ck.get(root, "entities")
    if ents is not None:
        if not isinstance(ents, yaml.SequenceNode):
            ck.err(ents, "entities must be a list of {name, type, aliases}")
        else:
            seen: dict[tuple[str, str], int] = {}
            for item in ents.value:
                if ck.mapping(item, "entity") is None:
                    continue
                ck.unknown_keys(item, {"name", "type", "aliases"}, "entity")
                ename = ck.string(ck.get(item, "name"), "entity: name")
                if ck.get(item, "name") is None:
                    ck.err(item, "entity: missing name")
                tnode = ck.get(item, "type")
                etype = ck.string(tnode, f"entity {ename}: type") if tnode is not None else None
                if tnode is None:
                    ck.err(item, f"entity {ename}: missing type")
                elif etype is not None and etype not in entity_types:
                    ck.err(tnode, f"entity {ename}: type '{etype}' is not a declared entity type")
                aliases = ck.string_list(ck.get(item, "aliases"), f"entity {ename}: aliases")
                if ename and etype:
                    key = (" ".join(ename.lower().split()), etype)
                    if key in seen:
                        ck.err(item, f"entity {ename} ({etype}) is declared twice (first on line {seen[key]})")
                    seen[key] = item.start_mark.line + 1
                    entities.append(DeclaredEntity(ename, etype, aliases, item.start_mark.line + 1))

    graph = _graph_options(ck, ck.get(root, "graph"))
    if ck.errors:
        raise OntologyError(ck.errors)
    return Domain(name, path, entity_types, relation_types, entities, graph)


def _graph_options(ck: _Checker, node) -> GraphOptions:
    opts = GraphOptions()
    if node is None or ck.mapping(node, "graph") is None:
        return opts
    allowed = {
        "rank_by",
        "min_confidence",
        "citation_hop",
        "question_entities",
        "max_seeds",
        "max_fanout",
        "max_entities",
        "mentions_per_entity",
        "community_top",
        "community_min_size",
        "community_tiers",
    }
    ck.unknown_keys(node, allowed, "graph")
    data = yaml.safe_load(yaml.serialize(node)) or {}
    nodes = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    if "rank_by" in data:
        if data["rank_by"] not in ("hops", "confidence"):
            ck.err(nodes["rank_by"], "graph.rank_by must be 'hops' or 'confidence'")
        else:
            opts.rank_by = data["rank_by"]
    if "min_confidence" in data and data["min_confidence"] is not None:
        if data["min_confidence"] not in CONFIDENCES:
            ck.err(nodes["min_confidence"], "graph.min_confidence must be null, 0.4, 0.7 or 1.0")
        else:
            opts.min_confidence = float(data["min_confidence"])
    if "citation_hop" in data:
        if not isinstance(data["citation_hop"], bool):
            ck.err(nodes["citation_hop"], "graph.citation_hop must be true or false")
        else:
            opts.citation_hop = data["citation_hop"]
    if "question_entities" in data:
        if data["question_entities"] not in ("offline", "model"):
            ck.err(nodes["question_entities"], "graph.question_entities must be 'offline' or 'model'")
        else:
            opts.question_entities = data["question_entities"]
    for key in (
        "max_seeds",
        "max_fanout",
        "max_entities",
        "mentions_per_entity",
        "community_top",
        "community_min_size",
    ):
        if key in data:
            v = data[key]
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                ck.err(nodes[key], f"graph.{key} must be a positive integer")
            else:
                setattr(opts, key, v)
    if "community_tiers" in data:
        tiers = data["community_tiers"]
        tnode = nodes["community_tiers"]
        if not isinstance(tiers, list) or not tiers or not all(isinstance(t, list) and t for t in tiers):
            ck.err(tnode, "graph.community_tiers must be a list of non-empty lists of license classes")
        else:
            out = []
            for tier_node, tier in zip(tnode.value, tiers):
                bad = [x for x in tier if x not in LICENSES]
                if bad:
                    ck.err(tier_node, f"graph.community_tiers: unknown license class {bad[0]!r}")
                out.append(tuple(x for x in LICENSES if x in tier))
            for a, b in zip(out, out[1:]):
                if not set(a) < set(b):
                    ck.err(tnode, "graph.community_tiers: each tier must add license classes to the one before it")
                    break
            opts.community_tiers = out
    return opts
