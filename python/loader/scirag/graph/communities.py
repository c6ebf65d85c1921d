"""Communities: deterministic label propagation over the entity graph, a summary
per community (a model's, or an extractive one offline), embedded.

A summary aggregates evidence from many documents before any caller's scope is
known. The reference switches the layer off under any scope; scirag builds the
communities once per *license tier* (domain.yaml graph.community_tiers), each
from the evidence of that tier's documents only, and records every source
document. Row-level security then shows a summary exactly when all its source
documents are in the caller's scope and the caller may see every license class
of the tier (policies/community_tier: the grouping used the whole tier's edges),
and search_community answers from the broadest tier the caller can see: a public
caller gets summaries built from public documents, never a summary that merely
hides its restricted half.

Names are tier-local too (issue 13): kg_entities.name may come from restricted
text (the first surface an extractor saw, a model's name, a merge survivor), so
a community never uses it blindly. An entity is named in a community by its
declared domain name, else by its canonical name only where that name is written
in the community's own source documents, else by its most frequent surface in
them. An edge joins a tier's graph only when both its ends are mentioned in the
edge's own document, so every member has such a surface. Titles, summaries and
what a model is sent are built from those names and the source documents'
phrases only.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

import psycopg

from scirag.graph.ontology import Domain
from scirag_helpers.llm import LLMClient, LLMError

MAX_ITERATIONS = 50
SUMMARY_STATEMENTS = 6


def label_propagation(
    nodes: list[int], weights: dict[tuple[int, int], float], max_iterations: int = MAX_ITERATIONS
) -> dict[int, int]:
    """Deterministic (asynchronous, fixed order) label propagation.

    Every node starts with its own id as label; nodes are visited in ascending
    id order and take the label with the greatest summed edge weight among their
    neighbours, keeping their own label on a tie that includes it and otherwise
    taking the smallest tied label. Stops when a full pass changes nothing."""
    adj: dict[int, dict[int, float]] = defaultdict(dict)
    for (a, b), w in weights.items():
        if a == b:
            continue
        adj[a][b] = adj[a].get(b, 0.0) + w
        adj[b][a] = adj[b].get(a, 0.0) + w
    labels = {n: n for n in nodes}
    order = sorted(nodes)
    for _ in range(max_iterations):
        changed = False
        for n in order:
            if not adj[n]:
                continue
            score: dict[int, float] = defaultdict(float)
            for m, w in adj[n].items():
                score[labels[m]] += w
            best = max(score.values())
            tied = sorted(lbl for lbl, s in score.items() if abs(s - best) < 1e-9)
            new = labels[n] if labels[n] in tied else tied[0]
            if new != labels[n]:
                labels[n] = new
                changed = True
        if not changed:
            break
    return labels


@dataclass
class CommunityStats:
    tiers: int = 0
    communities: int = 0
    by_tier: dict[int, int] = field(default_factory=dict)
    model_summaries: int = 0
    extractive_summaries: int = 0
    model_failures: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        per = ", ".join(f"tier {t}: {n}" for t, n in sorted(self.by_tier.items()))
        return (
            f"{self.communities} communities over {self.tiers} license tiers ({per}); summaries: "
            f"{self.model_summaries} by model, {self.extractive_summaries} extractive"
            f"{f', {self.model_failures} model failures fell back to extractive' if self.model_failures else ''}; "
            f"{self.seconds:.1f}s"
        )


@dataclass
class Edge:
    src: int
    tgt: int
    rel_type: str
    phrase: str
    confidence: float
    chunk_id: int
    document_id: int


def extractive_summary(title_names: list[str], edges: list[Edge], names: dict[int, str]) -> str:
    """Members, then the strongest distinct statements (quoted from the evidence)."""
    lines = ["Entities: " + ", ".join(title_names) + "."]
    seen = set()
    # direct statements in prose first (a table row quotes poorly), shorter first
    ranked = sorted(edges, key=lambda e: (-e.confidence, " | " in e.phrase, len(e.phrase), e.chunk_id))
    for e in ranked:
        key = " ".join(e.phrase.lower().split())
        if key in seen:
            continue
        seen.add(key)
        phrase = e.phrase if len(e.phrase) <= 300 else e.phrase[:297] + "..."
        lines.append(f'{names[e.src]} {e.rel_type.lower().replace("_", " ")} {names[e.tgt]}: "{phrase}"')
        if len(lines) > SUMMARY_STATEMENTS:
            break
    return "\n".join(lines)


def model_summary(client: LLMClient, title_names: list[str], edges: list[Edge], names: dict[int, str]) -> str:
    facts = "\n".join(
        f"- {names[e.src]} {e.rel_type} {names[e.tgt]} ({e.confidence}): {e.phrase[:300]}"
        for e in sorted(edges, key=lambda e: (-e.confidence, e.chunk_id))[:40]
    )
    prompt = (
        f"Entities of one community of a knowledge graph: {', '.join(title_names)}.\n"
        f"Statements from the source documents:\n{facts}\n\n"
        "Write a summary of three to five sentences of what these statements say together. "
        "Use only the statements; keep their numbers and units."
    )
    text = client.complete(
        prompt, system="You summarise scientific evidence faithfully.", temperature=0.0, max_tokens=400
    ).strip()
    if not text:
        raise LLMError("empty summary")
    return text


@dataclass
class Surface:
    document_id: int
    surface: str
    surface_key: str
    occurrences: int


@dataclass
class EntityRow:
    id: int
    name: str
    name_key: str
    declared: bool


def local_name(entity: EntityRow, surfaces: list[Surface], documents: set[int]) -> str | None:
    """How ``entity`` may be named in a community built from ``documents``: its
    declared name (domain.yaml is public), its canonical name where those documents
    write it, else its most frequent surface in them (ties: alphabetical). None
    when they never mention it: such an entity cannot be named there."""
    if entity.declared:
        return entity.name
    counts: dict[str, int] = defaultdict(int)
    for s in surfaces:
        if s.document_id in documents:
            if s.surface_key == entity.name_key:
                return entity.name
            counts[s.surface] += s.occurrences
    return min(counts, key=lambda x: (-counts[x], x)) if counts else None


def _random_ids(n: int) -> list[int]:
    """n distinct random positive bigints (63-bit): community ids that say nothing about
    how many communities exist, in any tier."""
    import secrets

    ids: set[int] = set()
    while len(ids) < n:
        ids.add(secrets.randbelow(2**62) + 1)
    return sorted(ids, key=lambda _: secrets.randbits(32))


def build_communities(
    conn: psycopg.Connection,
    domain: Domain,
    client: LLMClient | None = None,
    *,
    embedder=None,
    progress: Callable[[str], None] | None = None,
) -> CommunityStats:
    """Rebuilds every community (all tiers) in one transaction."""
    started = time.monotonic()
    stats = CommunityStats()
    docs = {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute("SELECT id, license::text, source, retracted FROM scirag.documents").fetchall()
    }
    entities = {
        r[0]: EntityRow(*r)
        for r in conn.execute(
            "SELECT id, name, name_key, declared FROM scirag.kg_entities WHERE canonical_entity_id IS NULL"
        ).fetchall()
    }
    surfaces: dict[int, list[Surface]] = defaultdict(list)
    for entity_id, *rest in conn.execute(
        "SELECT entity_id, document_id, surface, surface_key, occurrences FROM scirag.kg_mentions "
        "ORDER BY entity_id, document_id, surface_key"
    ).fetchall():
        surfaces[entity_id].append(Surface(*rest))
    mentioned = {(e, s.document_id) for e, ss in surfaces.items() for s in ss}
    all_edges = [
        Edge(*r)
        for r in conn.execute(
            """SELECT r.source_entity_id, r.target_entity_id, r.rel_type, r.phrase, r.confidence, r.chunk_id, r.document_id
           FROM scirag.kg_relationships r ORDER BY r.id"""
        ).fetchall()
    ]
    conn.commit()
    if embedder is None:
        from scirag_helpers.embedder import Embedder

        dim = int(conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])
        conn.commit()
        embedder = Embedder(threads=2, expected_dim=dim)

    rows = []  # (tier, licenses, label, title, summary, method, members, edges)
    previous_docs: set[int] | None = None
    for tier_no, licenses in enumerate(domain.graph.community_tiers, 1):
        # the tier's own edges only, each nameable from its own document
        edges = [
            e
            for e in all_edges
            if docs.get(e.document_id, ("",))[0] in licenses
            and e.src in entities
            and e.tgt in entities
            and (e.src, e.document_id) in mentioned
            and (e.tgt, e.document_id) in mentioned
        ]
        tier_docs = {e.document_id for e in edges}
        if not edges or tier_docs == previous_docs:
            continue  # nothing new in this tier: the narrower tier already covers it
        previous_docs = tier_docs
        stats.tiers += 1
        weights: dict[tuple[int, int], float] = defaultdict(float)
        for e in edges:
            weights[(min(e.src, e.tgt), max(e.src, e.tgt))] += e.confidence
        nodes = sorted({n for pair in weights for n in pair})
        labels = label_propagation(nodes, weights)
        groups: dict[int, set[int]] = defaultdict(set)
        for n, lbl in labels.items():
            groups[lbl].add(n)
        for _lbl, group in sorted(groups.items()):
            inner = [e for e in edges if e.src in group and e.tgt in group]
            # members are the entities the community's evidence states something about
            members = sorted({n for e in inner for n in (e.src, e.tgt)})
            if not inner or len(members) < domain.graph.community_min_size:
                continue
            src_docs = {e.document_id for e in inner}
            names = {m: local_name(entities[m], surfaces[m], src_docs) for m in members}
            degree: dict[int, float] = defaultdict(float)
            for e in inner:
                degree[e.src] += e.confidence
                degree[e.tgt] += e.confidence
            top = sorted(members, key=lambda m: (-degree[m], names[m]))
            title_names = [names[m] for m in top[:8]]
            summary, method = None, "extractive"
            if client is not None:
                try:
                    summary, method = model_summary(client, title_names, inner, names), getattr(client, "name", "model")
                    stats.model_summaries += 1
                except LLMError:
                    stats.model_failures += 1
            if summary is None:
                summary = extractive_summary(title_names, inner, names)
                stats.extractive_summaries += 1
            rows.append(
                (
                    tier_no,
                    list(licenses),
                    members[0],
                    ", ".join(title_names[:4]),
                    summary,
                    method,
                    {m: degree[m] for m in members},
                    inner,
                )
            )
        stats.by_tier[tier_no] = sum(1 for r in rows if r[0] == tier_no)
        if progress:
            progress(
                f"tier {tier_no} ({','.join(licenses)}): {len(nodes)} entities, {len(edges)} relationships, "
                f"{stats.by_tier[tier_no]} communities"
            )

    vectors = embedder.embed([r[4] for r in rows]) if rows else []
    from scirag_helpers.embedder import to_pgvector

    with conn.transaction():
        conn.execute("DELETE FROM scirag.kg_communities")
        # Random ids (issue 26): numbered in one sequence across tiers, the ids a reader
        # sees would count the communities of tiers it may not see through their gaps.
        ids = _random_ids(len(rows))
        for (tier_no, licenses, label, title, summary, method, members, inner), vec, new_id in zip(rows, vectors, ids):
            src_docs = sorted({e.document_id for e in inner})
            cid = conn.execute(
                """INSERT INTO scirag.kg_communities (id, tier, tier_licenses, label, title, summary, summary_method,
                       embedding, embedding_version, entity_count, relationship_count, source_documents,
                       licenses, sources, any_retracted)
                   OVERRIDING SYSTEM VALUE
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
                (
                    new_id,
                    tier_no,
                    licenses,
                    label,
                    title,
                    summary,
                    method,
                    to_pgvector(vec),
                    embedder.version,
                    len(members),
                    len(inner),
                    src_docs,
                    sorted({docs[d][0] for d in src_docs}),
                    sorted({docs[d][1] for d in src_docs}),
                    any(docs[d][2] for d in src_docs),
                ),
            ).fetchone()[0]
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO scirag.kg_community_members (community_id, entity_id, degree) VALUES (%s, %s, %s)",
                    [(cid, m, d) for m, d in sorted(members.items())],
                )
                chunk_w: dict[int, float] = defaultdict(float)
                for e in inner:
                    chunk_w[e.chunk_id] += e.confidence
                cur.executemany(
                    "INSERT INTO scirag.kg_community_chunks (community_id, chunk_id, weight) VALUES (%s, %s, %s)",
                    [(cid, c, w) for c, w in sorted(chunk_w.items())],
                )
            stats.communities += 1
    stats.seconds = time.monotonic() - started
    return stats
