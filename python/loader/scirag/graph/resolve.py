"""Entity resolution: a conservative three-tier pass (reference methodology 6.3).

  tier 1  normalised name or alias overlap, same type;
  tier 2  high-similarity same-type names (ratio >= 0.92);
  tier 3  the ambiguous band (0.80 <= ratio < 0.92, or one name's words inside
          the other's): one batched model decision; skipped with --no-llm.

Two entities declared in domain.yaml are never merged: the domain file says
they are different things. ``plan_resolution`` only reads; ``apply_plan`` writes,
in one transaction: evidence pointers and relationships move to the survivor,
the merged entity becomes a tombstone (canonical_entity_id), every merge gets a
durable entity_resolution_audit row, and community summaries, which
materialise membership, are cleared.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher

import psycopg

from scirag.graph.ontology import Domain
from scirag_helpers.llm import LLMClient, LLMError, parse_json_response
from scirag_helpers.words import entity_name

HIGH = 0.92
LOW = 0.80
# Stronger than the database key: drops parentheticals and articles, singular words
# (the shared word normaliser, scirag_helpers.words).
norm = entity_name


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass
class Entity:
    id: int
    name: str
    type: str
    aliases: list[str]
    declared: bool
    mentions: int


@dataclass
class Candidate:
    a: int
    b: int
    a_name: str
    b_name: str
    type: str
    tier: int
    method: str
    similarity: float
    reason: str
    decided_by: str = "rule"


@dataclass
class Merge:
    survivor: int
    merged: int
    survivor_name: str
    merged_name: str
    type: str
    tier: int
    method: str
    similarity: float
    reason: str
    decided_by: str


@dataclass
class Plan:
    entities: int = 0
    merges: list[Merge] = field(default_factory=list)
    rejected: list[Candidate] = field(default_factory=list)
    undecided: list[Candidate] = field(default_factory=list)
    model_errors: int = 0

    def as_dict(self) -> dict:
        return {
            "entities": self.entities,
            "merges": [asdict(m) for m in self.merges],
            "rejected": [asdict(c) for c in self.rejected],
            "undecided": [asdict(c) for c in self.undecided],
            "model_errors": self.model_errors,
        }

    def report(self) -> str:
        lines = [f"{self.entities} active entities; {len(self.merges)} merges planned"]
        for m in self.merges:
            lines.append(
                f"  tier {m.tier} ({m.method}, {m.decided_by}): '{m.merged_name}' -> '{m.survivor_name}' "
                f"[{m.type}] similarity {m.similarity:.2f}: {m.reason}"
            )
        if self.rejected:
            lines.append(f"{len(self.rejected)} ambiguous pairs the model kept apart")
        if self.undecided:
            lines.append(f"{len(self.undecided)} ambiguous pairs left undecided (no model, or --no-llm):")
            lines += [f"  '{c.a_name}' ~ '{c.b_name}' [{c.type}] similarity {c.similarity:.2f}" for c in self.undecided]
        if self.model_errors:
            lines.append(f"{self.model_errors} malformed model answers: no tier-3 merge was taken from them")
        return "\n".join(lines)


def load_entities(conn: psycopg.Connection) -> list[Entity]:
    rows = conn.execute(
        """SELECT e.id, e.name, e.entity_type, e.aliases, e.declared,
                  (SELECT count(*) FROM scirag.kg_mentions m WHERE m.entity_id = e.id)
           FROM scirag.kg_entities e WHERE e.canonical_entity_id IS NULL ORDER BY e.id"""
    ).fetchall()
    return [Entity(*r) for r in rows]


def candidates(entities: list[Entity]) -> list[Candidate]:
    out: list[Candidate] = []
    by_type: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        by_type[e.type].append(e)
    for etype, ents in sorted(by_type.items()):
        keys = {e.id: norm(e.name) for e in ents}
        alias_keys = {e.id: {norm(a) for a in e.aliases} | {keys[e.id]} for e in ents}
        # blocking: only pairs that share a word are compared
        by_word: dict[str, set[int]] = defaultdict(set)
        for e in ents:
            for w in keys[e.id].split():
                by_word[w].add(e.id)
            for a in alias_keys[e.id]:
                by_word["\x00" + a].add(e.id)
        pairs = set()
        for ids in by_word.values():
            s = sorted(ids)
            for i, a in enumerate(s):
                for b in s[i + 1 :]:
                    pairs.add((a, b))
        ent = {e.id: e for e in ents}
        for a, b in sorted(pairs):
            ea, eb = ent[a], ent[b]
            if ea.declared and eb.declared:
                continue
            ka, kb = keys[a], keys[b]
            sim = similarity(ka, kb)
            if ka == kb:
                out.append(
                    Candidate(a, b, ea.name, eb.name, etype, 1, "normalised_name", 1.0, f"names normalise to '{ka}'")
                )
            elif ka in alias_keys[b] or kb in alias_keys[a] or (alias_keys[a] - {ka}) & (alias_keys[b] - {kb}):
                shared = sorted((alias_keys[a] & alias_keys[b]) or {ka if ka in alias_keys[b] else kb})
                out.append(
                    Candidate(
                        a, b, ea.name, eb.name, etype, 1, "alias_overlap", sim, f"share the surface '{shared[0]}'"
                    )
                )
            elif sim >= HIGH:
                out.append(
                    Candidate(
                        a, b, ea.name, eb.name, etype, 2, "high_similarity", sim, f"name similarity {sim:.2f} >= {HIGH}"
                    )
                )
            else:
                wa, wb = set(ka.split()), set(kb.split())
                contained = (wa < wb or wb < wa) and abs(len(wa) - len(wb)) == 1
                if sim >= LOW or contained:
                    out.append(
                        Candidate(
                            a,
                            b,
                            ea.name,
                            eb.name,
                            etype,
                            3,
                            "ambiguous",
                            sim,
                            "words of one name inside the other"
                            if contained
                            else f"name similarity {sim:.2f} in [{LOW}, {HIGH})",
                        )
                    )
    return out


def decide_ambiguous(client: LLMClient, domain: Domain, pairs: list[Candidate]) -> tuple[dict[int, bool], bool]:
    """One batched model call; returns ({pair index: same?}, malformed?)."""
    listing = "\n".join(
        f'{i}. "{c.a_name}" vs "{c.b_name}" (both {c.type}: '
        f"{domain.entity_types[c.type].description if c.type in domain.entity_types else ''})"
        for i, c in enumerate(pairs, 1)
    )
    prompt = (
        "For each numbered pair, decide whether the two names denote the same real-world entity "
        "in this domain. Be conservative: answer same only when they are certainly one thing.\n\n"
        f'{listing}\n\nAnswer with JSON: {{"decisions": [{{"pair": 1, "same": true}}, ...]}}'
    )
    try:
        data = parse_json_response(
            client.complete(
                prompt,
                system="You resolve duplicate entities. Answer with JSON only.",
                temperature=0.0,
                json_mode=True,
                max_tokens=1024,
            )
        )
    except LLMError:
        return {}, True
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        return {}, True
    out = {}
    for d in data["decisions"]:
        if (
            isinstance(d, dict)
            and isinstance(d.get("pair"), int)
            and isinstance(d.get("same"), bool)
            and 1 <= d["pair"] <= len(pairs)
        ):
            out[d["pair"] - 1] = d["same"]
    return out, False


def plan_resolution(conn: psycopg.Connection, domain: Domain, client: LLMClient | None) -> Plan:
    """Computes the merges; reads only."""
    entities = load_entities(conn)
    conn.rollback()
    plan = Plan(entities=len(entities))
    cands = candidates(entities)
    accepted = [c for c in cands if c.tier in (1, 2)]
    # the model sees the pairs in an order that depends on names only (stable prompts)
    ambiguous = sorted(
        (c for c in cands if c.tier == 3), key=lambda c: (c.type, min(c.a_name, c.b_name), max(c.a_name, c.b_name))
    )
    if ambiguous and client is not None:
        decisions, malformed = decide_ambiguous(client, domain, ambiguous)
        plan.model_errors += int(malformed)
        for i, c in enumerate(ambiguous):
            c.decided_by = getattr(client, "name", "model")
            if decisions.get(i) is True:
                accepted.append(c)
            elif decisions.get(i) is False:
                plan.rejected.append(c)
            else:
                plan.undecided.append(c)
    else:
        plan.undecided.extend(ambiguous)

    # union-find over accepted pairs; the survivor of a group is the declared
    # entity, else the one with most evidence, else the lowest id
    ent = {e.id: e for e in entities}
    parent = {e.id: e.id for e in entities}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def better(a, b):
        ka = (not ent[a].declared, -ent[a].mentions, a)
        kb = (not ent[b].declared, -ent[b].mentions, b)
        return a if ka <= kb else b

    reasons = {}
    for c in sorted(accepted, key=lambda c: (c.tier, c.a, c.b)):
        ra, rb = find(c.a), find(c.b)
        if ra == rb:
            continue
        if ent[ra].declared and ent[rb].declared:
            continue  # would merge two declared entities through a third
        keep = better(ra, rb)
        drop = rb if keep == ra else ra
        parent[drop] = keep
        reasons[drop] = c
    for drop, c in sorted(reasons.items()):
        root = find(drop)
        plan.merges.append(
            Merge(
                root,
                drop,
                ent[root].name,
                ent[drop].name,
                c.type,
                c.tier,
                c.method,
                c.similarity,
                c.reason,
                c.decided_by,
            )
        )
    return plan


def apply_plan(conn: psycopg.Connection, plan: Plan) -> dict:
    """Applies every planned merge in one transaction, with an audit row each."""
    run_id = uuid.uuid4().hex[:12]
    cleared = 0
    with conn.transaction():
        for m in plan.merges:
            s, d = m.survivor, m.merged
            moved_m = conn.execute(
                """INSERT INTO scirag.kg_mentions AS x (entity_id, chunk_id, surface, occurrences, heading, original_entity_id)
                   SELECT %s, chunk_id, surface, occurrences, heading, original_entity_id
                   FROM scirag.kg_mentions WHERE entity_id = %s
                   ON CONFLICT (entity_id, chunk_id, surface_key) DO UPDATE
                     SET occurrences = greatest(x.occurrences, excluded.occurrences), heading = x.heading OR excluded.heading""",
                (s, d),
            ).rowcount
            conn.execute("DELETE FROM scirag.kg_mentions WHERE entity_id = %s", (d,))
            moved_r = conn.execute(
                """INSERT INTO scirag.kg_relationships AS r
                     (source_entity_id, target_entity_id, rel_type, phrase, confidence, extractor, extracted_at, chunk_id)
                   SELECT CASE WHEN source_entity_id = %(d)s THEN %(s)s ELSE source_entity_id END,
                          CASE WHEN target_entity_id = %(d)s THEN %(s)s ELSE target_entity_id END,
                          rel_type, phrase, confidence, extractor, extracted_at, chunk_id
                   FROM scirag.kg_relationships
                   WHERE (source_entity_id = %(d)s OR target_entity_id = %(d)s)
                     AND (CASE WHEN source_entity_id = %(d)s THEN %(s)s ELSE source_entity_id END)
                         <> (CASE WHEN target_entity_id = %(d)s THEN %(s)s ELSE target_entity_id END)
                   ON CONFLICT (rel_type, source_entity_id, target_entity_id, chunk_id) DO UPDATE
                     SET phrase = CASE WHEN excluded.confidence > r.confidence THEN excluded.phrase ELSE r.phrase END,
                         confidence = greatest(r.confidence, excluded.confidence)""",
                {"s": s, "d": d},
            ).rowcount
            conn.execute(
                "DELETE FROM scirag.kg_relationships WHERE source_entity_id = %(d)s OR target_entity_id = %(d)s",
                {"d": d},
            )
            conn.execute(
                """UPDATE scirag.kg_entities e
                   SET aliases = ARRAY(SELECT u.a FROM (SELECT DISTINCT ON (scirag.kg_normalize(a)) a, i
                                       FROM unnest(e.aliases || (SELECT m.aliases FROM scirag.kg_entities m WHERE m.id = %s)) WITH ORDINALITY AS x(a, i)
                                       ORDER BY scirag.kg_normalize(a), i) u ORDER BY u.i)
                   WHERE e.id = %s""",
                (d, s),
            )
            conn.execute(
                "UPDATE scirag.kg_entities SET canonical_entity_id = %s, merged_at = now() WHERE id = %s", (s, d)
            )
            conn.execute(
                "UPDATE scirag.kg_entities SET canonical_entity_id = %s WHERE canonical_entity_id = %s", (s, d)
            )
            conn.execute(
                """INSERT INTO scirag.entity_resolution_audit (run_id, tier, method, survivor_entity_id, merged_entity_id,
                       survivor_name, merged_name, entity_type, similarity, decided_by, reason, mentions_moved,
                       relationships_moved)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                (
                    run_id,
                    m.tier,
                    m.method,
                    s,
                    d,
                    m.survivor_name,
                    m.merged_name,
                    m.type,
                    m.similarity,
                    m.decided_by,
                    m.reason,
                    moved_m,
                    moved_r,
                ),
            )
        if plan.merges:
            # summaries materialise membership and relationships: stale after any merge
            cleared = conn.execute("DELETE FROM scirag.kg_communities").rowcount
    return {"run_id": run_id, "merged": len(plan.merges), "communities_cleared": cleared}
