"""Graph extraction: chunk -> entities, mentions, relationships, citations.

Two extractors produce the same ``Extraction``: the offline ontology-driven one
(scirag.graph.offline) and ``ModelExtractor``, which asks an LLM (google-genai or
any OpenAI-compatible endpoint, through scirag_helpers.llm) for JSON and keeps
only what the ontology allows: unknown types and dangling endpoints are dropped
and counted, a malformed answer stores nothing for its chunk (the chunk stays
pending, so the next run retries it).

``run_extract`` is incremental: it reads only chunks whose graph_extracted_at is
NULL (or every chunk with ``all_chunks``) and merges into what is stored:
aliases union, a repeated typed edge from the same chunk keeps its highest
confidence, edges from other chunks stay separate rows.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Protocol

import psycopg

from scirag.graph.ontology import CONFIDENCES, Domain
from scirag.graph.text import find_dois, occurs_in
from scirag_helpers.llm import LLMClient, LLMError, parse_json_response
from scirag_helpers.text import chunk_head_of


@dataclass
class ExtractedEntity:
    name: str
    type: str
    declared: bool = False
    surfaces: dict[str, int] = field(default_factory=dict)  # surface as written -> occurrences


@dataclass
class ExtractedRelation:
    type: str
    source: tuple[str, str]  # (name, type)
    target: tuple[str, str]
    phrase: str
    confidence: float


@dataclass
class Extraction:
    entities: dict[tuple[str, str], ExtractedEntity] = field(default_factory=dict)
    relations: dict[tuple[str, tuple, tuple], ExtractedRelation] = field(default_factory=dict)
    dropped: Counter = field(default_factory=Counter)
    malformed: bool = False

    def add_relation(self, rel: ExtractedRelation) -> None:
        key = (rel.type, rel.source, rel.target)
        old = self.relations.get(key)
        if old is None or rel.confidence > old.confidence:
            self.relations[key] = rel


class Extractor(Protocol):
    name: str

    def extract(self, text: str, body: str | None = None) -> Extraction:
        """text: a chunk's content; body: its stored body (chunks.body), which says
        exactly where the title/section head ends (None: no head)."""
        ...


# ---------------------------------------------------------------------------
# Model-backed extraction
# ---------------------------------------------------------------------------

SYSTEM = (
    "You extract a knowledge graph from one passage of a scientific document. "
    "Use only the entity and relation types you are given. Answer with one JSON object and nothing else."
)


def build_prompt(domain: Domain, text: str) -> str:
    ets = "\n".join(f"- {t.name}: {t.description}" for t in domain.entity_types.values())
    rts = "\n".join(f"- {r.name} ({r.source} -> {r.target}): {r.description}" for r in domain.relation_types.values())
    return f"""Entity types:
{ets}

Relation types (source type -> target type):
{rts}

Rules:
- Name each entity as the passage writes it; list other spellings the passage itself uses as aliases.
- A relationship's source and target must be names from your entity list, and its types must match the relation type.
- "phrase" is copied word for word from the passage and states the relationship.
- "confidence" is 1.0 for a direct statement, 0.7 for a strong implication, 0.4 for an inference across sentences.

Answer with JSON of this shape:
{{"entities": [{{"name": "...", "type": "...", "aliases": ["..."]}}],
 "relationships": [{{"source": "...", "target": "...", "type": "...", "phrase": "...", "confidence": 1.0}}]}}

Passage:
<<<
{text}
>>>"""


def validate_model_output(domain: Domain, text: str, raw: str, extractor_name: str = "model") -> Extraction:
    """Turns a model's answer into an Extraction, keeping only what the ontology and
    the passage support. A malformed answer yields an empty, ``malformed`` Extraction."""
    out = Extraction()
    try:
        data = parse_json_response(raw)
    except LLMError:
        out.malformed = True
        out.dropped["malformed_json"] += 1
        return out
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("entities", []), list)
        or not isinstance(data.get("relationships", []), list)
    ):
        out.malformed = True
        out.dropped["malformed_shape"] += 1
        return out
    by_name: dict[str, tuple[str, str]] = {}
    for item in data.get("entities", []):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("type"), str):
            out.dropped["malformed_entity"] += 1
            continue
        name, etype = " ".join(item["name"].split()), item["type"].strip()
        if etype not in domain.entity_types:
            out.dropped["unknown_entity_type"] += 1
            continue
        aliases = (
            [a for a in item.get("aliases", []) if isinstance(a, str)]
            if isinstance(item.get("aliases", []), list)
            else []
        )
        surfaces = {s: 1 for s in [name, *aliases] if s.strip() and occurs_in(s, text)}
        if not surfaces:
            out.dropped["entity_not_in_source"] += 1  # neither the name nor an alias is in the passage
            continue
        key = (name, etype)
        ent = out.entities.setdefault(key, ExtractedEntity(name, etype, False))
        for s in surfaces:
            ent.surfaces[_as_written(s, text)] = 1
        by_name.setdefault(name.lower(), key)
        for a in aliases:
            by_name.setdefault(" ".join(a.split()).lower(), key)
    for item in data.get("relationships", []):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("source", "target", "type")):
            out.dropped["malformed_relationship"] += 1
            continue
        rel = domain.relation_types.get(item["type"].strip())
        if rel is None:
            out.dropped["unknown_relation_type"] += 1
            continue
        src = by_name.get(" ".join(item["source"].split()).lower())
        tgt = by_name.get(" ".join(item["target"].split()).lower())
        if src is None or tgt is None:
            out.dropped["dangling_endpoint"] += 1
            continue
        if (src[1], tgt[1]) != (rel.source, rel.target):
            if (tgt[1], src[1]) == (rel.source, rel.target):
                src, tgt = tgt, src  # the model reversed a typed edge: the types say which way it goes
            else:
                out.dropped["endpoint_type_mismatch"] += 1
                continue
        if src == tgt:
            out.dropped["self_loop"] += 1
            continue
        conf = item.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 < conf <= 1:
            out.dropped["bad_confidence"] += 1
            continue
        conf = min(CONFIDENCES, key=lambda c: abs(c - conf))  # snap to the calibrated scale
        phrase = item.get("phrase")
        if not isinstance(phrase, str) or not occurs_in(phrase, text):
            out.dropped["phrase_not_in_source"] += 1
            continue
        out.add_relation(ExtractedRelation(rel.name, src, tgt, " ".join(phrase.split())[:500], conf))
    return out


def _as_written(surface: str, text: str) -> str:
    """The surface exactly as the passage writes it (case and spacing)."""
    import re

    words = surface.split()
    m = re.search(r"\s+".join(re.escape(w) for w in words), text, re.IGNORECASE)
    return m.group(0) if m else surface


class ModelExtractor:
    def __init__(self, domain: Domain, client: LLMClient):
        self.domain = domain
        self.client = client
        self.name = getattr(client, "name", "model")

    def extract(self, text: str, body: str | None = None) -> Extraction:
        # the model reads the whole content, head included (the title names things)
        try:
            raw = self.client.complete(
                build_prompt(self.domain, text), system=SYSTEM, temperature=0.0, json_mode=True, max_tokens=2048
            )
        except LLMError:
            out = Extraction(malformed=True)
            out.dropped["model_error"] += 1
            return out
        return validate_model_output(self.domain, text, raw, self.name)


# ---------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------


@dataclass
class ExtractStats:
    chunks: int = 0
    extracted: int = 0
    failed: int = 0
    entities: int = 0
    mentions: int = 0
    relationships: int = 0
    citations: int = 0
    resolved_citations: int = 0
    dropped: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> str:
        drops = ", ".join(f"{k} {v}" for k, v in sorted(self.dropped.items())) or "none"
        return (
            f"{self.extracted}/{self.chunks} chunks extracted ({self.failed} left pending), "
            f"{self.entities} entities, {self.mentions} mentions, {self.relationships} relationships, "
            f"{self.citations} citations ({self.resolved_citations} resolved); dropped: {drops}; "
            f"{self.seconds:.1f}s"
        )


def sync_options(conn: psycopg.Connection, domain: Domain) -> None:
    """Writes domain.yaml's graph options to scirag.kg_options (read by search_graph)."""
    for key, value in domain.graph.as_db_options().items():
        conn.execute("UPDATE scirag.kg_options SET value = %s WHERE key = %s", (value, key))


class GraphWriter:
    def __init__(self, conn: psycopg.Connection, extractor_name: str):
        self.conn = conn
        self.extractor_name = extractor_name

    def entity(self, ent: ExtractedEntity) -> tuple[int, int, bool]:
        """(id of the row for this name, id of its canonical entity, inserted?), upserting aliases."""
        aliases = list(ent.surfaces)  # first seen first
        row = self.conn.execute(
            """INSERT INTO scirag.kg_entities AS e (name, entity_type, aliases, declared, extractor)
               VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (name_key, entity_type) DO UPDATE
                 SET aliases = ARRAY(SELECT u.a FROM (SELECT DISTINCT ON (scirag.kg_normalize(a)) a, i
                                     FROM unnest(e.aliases || excluded.aliases) WITH ORDINALITY AS x(a, i)
                                     ORDER BY scirag.kg_normalize(a), i) u ORDER BY u.i),
                     declared = e.declared OR excluded.declared
               RETURNING id, coalesce(canonical_entity_id, id), (xmax = 0)""",
            (ent.name, ent.type, aliases, ent.declared, self.extractor_name),
        ).fetchone()
        return row[0], row[1], row[2]

    def write(
        self, chunk_id: int, own_doi: str | None, text: str, body: str, ex: Extraction, stats: ExtractStats
    ) -> None:
        ids: dict[tuple[str, str], int] = {}
        header = chunk_head_of(text, body)  # a mention there is a heading mention
        for key, ent in ex.entities.items():
            own, canonical, inserted = self.entity(ent)
            stats.entities += int(inserted)
            ids[key] = canonical
            for surface, n in ent.surfaces.items():
                self.conn.execute(
                    """INSERT INTO scirag.kg_mentions AS m
                         (entity_id, chunk_id, surface, occurrences, heading, original_entity_id)
                       VALUES (%s, %s, %s, %s, %s, %s)
                       ON CONFLICT (entity_id, chunk_id, surface_key) DO UPDATE
                         SET occurrences = greatest(m.occurrences, excluded.occurrences),
                             heading = m.heading OR excluded.heading""",
                    (canonical, chunk_id, surface, n, bool(header) and occurs_in(surface, header), own),
                )
                stats.mentions += 1
        for rel in ex.relations.values():
            src, tgt = ids.get(rel.source), ids.get(rel.target)
            if src is None or tgt is None:
                stats.dropped["dangling_endpoint"] += 1
                continue
            if src == tgt:
                continue  # both names resolve to one entity: not an edge
            self.conn.execute(
                """INSERT INTO scirag.kg_relationships AS r
                     (source_entity_id, target_entity_id, rel_type, phrase, confidence, extractor, chunk_id)
                   VALUES (%s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (rel_type, source_entity_id, target_entity_id, chunk_id) DO UPDATE
                     SET phrase = CASE WHEN excluded.confidence > r.confidence THEN excluded.phrase ELSE r.phrase END,
                         extractor = CASE WHEN excluded.confidence > r.confidence THEN excluded.extractor ELSE r.extractor END,
                         confidence = greatest(r.confidence, excluded.confidence),
                         extracted_at = now()""",
                (src, tgt, rel.type, rel.phrase, rel.confidence, self.extractor_name, chunk_id),
            )
            stats.relationships += 1
        for doi in find_dois(text):
            if own_doi and doi == own_doi.lower():
                continue
            cur = self.conn.execute(
                """INSERT INTO scirag.document_citations (chunk_id, cited_doi) VALUES (%s, %s)
                   ON CONFLICT (document_id, cited_doi) DO NOTHING""",
                (chunk_id, doi),
            )
            stats.citations += cur.rowcount


def resolve_citations(conn: psycopg.Connection) -> int:
    """Points citations at the corpus documents their DOIs name (new documents resolve old citations)."""
    cur = conn.execute(
        """UPDATE scirag.document_citations c SET cited_document_id = d.id
           FROM scirag.documents d
           WHERE lower(d.doi) = c.cited_doi AND d.id <> c.document_id
             AND c.cited_document_id IS DISTINCT FROM d.id"""
    )
    return cur.rowcount


def run_extract(
    conn: psycopg.Connection,
    domain: Domain,
    extractor: Extractor,
    *,
    all_chunks: bool = False,
    limit: int | None = None,
    batch: int = 25,
    document_ids: list[int] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ExtractStats:
    """Extracts pending chunks (graph_extracted_at IS NULL, or all with all_chunks; only
    those of document_ids when given), one transaction per batch; a chunk whose model
    answer is malformed stays pending."""
    started = time.monotonic()
    stats = ExtractStats()
    sync_options(conn, domain)
    conn.commit()
    ids = [
        r[0]
        for r in conn.execute(
            """SELECT id FROM scirag.chunks WHERE kind <> 'section' AND (graph_extracted_at IS NULL OR %s)
             AND (%s::bigint[] IS NULL OR document_id = ANY (%s::bigint[]))
           ORDER BY id LIMIT %s""",
            (all_chunks, document_ids, document_ids, limit),
        ).fetchall()
    ]
    conn.commit()
    stats.chunks = len(ids)
    writer = GraphWriter(conn, extractor.name)
    for start in range(0, len(ids), batch):
        part = ids[start : start + batch]
        rows = conn.execute(
            """SELECT c.id, c.content, c.body, d.doi FROM scirag.chunks c JOIN scirag.documents d ON d.id = c.document_id
               WHERE c.id = ANY (%s) ORDER BY c.id""",
            (part,),
        ).fetchall()
        done = []
        with conn.transaction():
            for chunk_id, content, body, doi in rows:
                ex = extractor.extract(content, body)
                stats.dropped.update(ex.dropped)
                if ex.malformed:
                    stats.failed += 1
                    continue  # nothing stored; stays pending for the next run
                writer.write(chunk_id, doi, content, body, ex, stats)
                done.append(chunk_id)
            if done:
                conn.execute("UPDATE scirag.chunks SET graph_extracted_at = now() WHERE id = ANY (%s)", (done,))
        stats.extracted += len(done)
        if progress:
            progress(
                f"[{min(start + batch, len(ids))}/{len(ids)}] chunks read, {stats.relationships} relationships so far"
            )
    stats.resolved_citations = resolve_citations(conn)
    conn.commit()
    stats.seconds = time.monotonic() - started
    return stats
