"""`scirag gc`: removes what `scirag doctor` calls garbage. Dry run by default.

Removed (or repaired): mentions and relationships filed under merged entities (moved
to the survivor, duplicates dropped), relationships whose evidence chunk no longer
mentions an endpoint, entities nothing points at, resolved citations whose target
document is gone (set back to unresolved, then resolved again), communities made
stale by merges, postings of deleted chunks, and BM25 statistics that disagree with
the postings (rebuilt). Kept, as the methodology requires: tombstones (a chain of
them is shortened to point at the final survivor) and entity_resolution_audit rows.

Everything runs in one transaction: --apply either does all of it or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg

from scirag.upkeep.doctor import GRAPH_GARBAGE, keyword_drift, postings_sql


@dataclass
class GcReport:
    applied: bool
    actions: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        verb = "removed/repaired" if self.applied else "would remove/repair"
        lines = [f"{'gc' if self.applied else 'gc (dry run; --apply to act)'}:"]
        for name, n in self.actions.items():
            lines.append(f"  {name.replace('_', ' ')}: {n}")
        total = sum(self.actions.values())
        lines.append(f"{verb} {total} row(s); tombstones and audit rows kept")
        return "\n".join(lines)


def _count(conn, sql: str) -> int:
    return conn.execute(f"SELECT count(*) FROM ({sql}) x").fetchone()[0]


def collapse_tombstone_chains(conn) -> int:
    """Points every tombstone at its final survivor (tombstones themselves stay)."""
    total = 0
    while True:
        n = conn.execute(
            """UPDATE scirag.kg_entities t SET canonical_entity_id = s.canonical_entity_id
               FROM scirag.kg_entities s
               WHERE t.canonical_entity_id = s.id AND s.canonical_entity_id IS NOT NULL
                 AND s.canonical_entity_id <> t.id"""
        ).rowcount
        total += n
        if n == 0:
            return total


def move_mentions_off_tombstones(conn) -> int:
    n = _count(conn, GRAPH_GARBAGE["mentions_on_tombstones"])
    if not n:
        return 0
    conn.execute(
        """INSERT INTO scirag.kg_mentions AS m (entity_id, chunk_id, surface, occurrences, heading, original_entity_id)
           SELECT DISTINCT ON (e.canonical_entity_id, o.chunk_id, o.surface_key)
                  e.canonical_entity_id, o.chunk_id, o.surface, o.occurrences, o.heading, o.original_entity_id
           FROM scirag.kg_mentions o JOIN scirag.kg_entities e ON e.id = o.entity_id
           WHERE e.canonical_entity_id IS NOT NULL
           ORDER BY e.canonical_entity_id, o.chunk_id, o.surface_key, o.occurrences DESC
           ON CONFLICT (entity_id, chunk_id, surface_key) DO UPDATE
             SET occurrences = greatest(m.occurrences, excluded.occurrences), heading = m.heading OR excluded.heading"""
    )
    conn.execute(
        """DELETE FROM scirag.kg_mentions m USING scirag.kg_entities e
           WHERE e.id = m.entity_id AND e.canonical_entity_id IS NOT NULL"""
    )
    return n


def move_relationships_off_tombstones(conn) -> int:
    n = _count(conn, GRAPH_GARBAGE["relationships_on_tombstones"])
    if not n:
        return 0
    conn.execute(
        """INSERT INTO scirag.kg_relationships AS r
             (source_entity_id, target_entity_id, rel_type, phrase, confidence, extractor, extracted_at, chunk_id)
           SELECT DISTINCT ON (rel_type, src, tgt, chunk_id) src, tgt, rel_type, phrase, confidence, extractor, extracted_at, chunk_id
           FROM (SELECT coalesce(s.canonical_entity_id, s.id) AS src, coalesce(t.canonical_entity_id, t.id) AS tgt, o.*
                 FROM scirag.kg_relationships o
                 JOIN scirag.kg_entities s ON s.id = o.source_entity_id JOIN scirag.kg_entities t ON t.id = o.target_entity_id
                 WHERE s.canonical_entity_id IS NOT NULL OR t.canonical_entity_id IS NOT NULL) x
           WHERE src <> tgt      -- both ends merged into one entity: no longer an edge
           ORDER BY rel_type, src, tgt, chunk_id, confidence DESC
           ON CONFLICT (rel_type, source_entity_id, target_entity_id, chunk_id) DO UPDATE
             SET confidence = greatest(r.confidence, excluded.confidence)"""
    )
    conn.execute(f"DELETE FROM scirag.kg_relationships WHERE id IN ({GRAPH_GARBAGE['relationships_on_tombstones']})")
    return n


def remove_postings_of_deleted_chunks(conn) -> int:
    """Postings (rows, and entries of compacted blocks when that layout exists) whose
    chunk is gone or is a section chunk."""
    n = conn.execute(
        """DELETE FROM scirag.kw_postings p
           WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.id = p.chunk_id AND c.kind <> 'section')"""
    ).rowcount
    if conn.execute("SELECT to_regclass('scirag.kw_blocks') IS NOT NULL").fetchone()[0]:
        bad = """SELECT DISTINCT b.lexeme, b.license, b.source, b.block FROM scirag.kw_blocks b, unnest(b.chunk_ids) AS u(id)
                 WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.id = u.id AND c.kind <> 'section')"""
        n += conn.execute("""SELECT count(*) FROM scirag.kw_blocks b, unnest(b.chunk_ids) AS u(id)
                              WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.id = u.id AND c.kind <> 'section')""").fetchone()[
            0
        ]
        # Filtering keeps the impact order; the block bounds are recomputed from what is left.
        conn.execute(f"""
            WITH bad AS ({bad}),
            kept AS (SELECT b.lexeme, b.license, b.source, b.block,
                            array_agg(u.id ORDER BY u.o) AS ids, array_agg(u.tf ORDER BY u.o) AS tfs,
                            array_agg(u.dl ORDER BY u.o) AS dls
                     FROM scirag.kw_blocks b JOIN bad USING (lexeme, license, source, block),
                          unnest(b.chunk_ids, b.tfs, b.dls) WITH ORDINALITY AS u(id, tf, dl, o)
                     WHERE EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.id = u.id AND c.kind <> 'section')
                     GROUP BY 1, 2, 3, 4)
            UPDATE scirag.kw_blocks b SET chunk_ids = k.ids, tfs = k.tfs, dls = k.dls,
                   max_tf = (SELECT max(t) FROM unnest(k.tfs) t), min_dl = (SELECT min(d) FROM unnest(k.dls) d)
            FROM kept k WHERE (b.lexeme, b.license, b.source, b.block) = (k.lexeme, k.license, k.source, k.block)""")
        conn.execute("""
            DELETE FROM scirag.kw_blocks b
            WHERE NOT EXISTS (SELECT 1 FROM unnest(b.chunk_ids) AS u(id)
                              JOIN scirag.chunks c ON c.id = u.id AND c.kind <> 'section')""")
    return n


def rebuild_keyword_stats(conn) -> int:
    """Recomputes kw_term_stats and kw_class_stats from the postings; returns the number
    of statistics rows that were wrong."""
    drift = keyword_drift(conn)
    wrong = drift["term_rows"] + drift["class_rows"]
    if not wrong:
        return 0
    # Loaders adding chunks meanwhile would add to statistics being rebuilt: hold them off.
    conn.execute(
        "LOCK TABLE scirag.kw_postings, scirag.kw_term_stats, scirag.kw_class_stats IN SHARE ROW EXCLUSIVE MODE"
    )
    p = postings_sql(conn)
    conn.execute("DELETE FROM scirag.kw_term_stats")
    conn.execute(f"""INSERT INTO scirag.kw_term_stats (license, source, lexeme, df)
                     SELECT license, source, lexeme, count(*) FROM ({p}) x GROUP BY 1, 2, 3""")
    conn.execute("DELETE FROM scirag.kw_class_stats")
    conn.execute(f"""INSERT INTO scirag.kw_class_stats (license, source, n_chunks, sum_dl)
                     SELECT license, source, count(*), sum(dl)
                     FROM (SELECT DISTINCT chunk_id, license, source, dl FROM ({p}) x) y GROUP BY 1, 2""")
    return wrong


def run_gc(conn: psycopg.Connection, apply: bool = False, empty_documents: bool = False) -> GcReport:
    """Counts (dry run) or removes the garbage, in one transaction."""
    report = GcReport(applied=apply)
    a = report.actions
    try:
        if not apply:
            for name, sql in GRAPH_GARBAGE.items():
                a[name] = _count(conn, sql)
            a["tombstone_chains_shortened"] = _count(
                conn,
                """
                SELECT 1 FROM scirag.kg_entities t JOIN scirag.kg_entities s ON s.id = t.canonical_entity_id
                WHERE s.canonical_entity_id IS NOT NULL""",
            )
            d = keyword_drift(conn)
            a["postings_of_deleted_chunks"] = d["orphan_postings"]
            a["keyword_statistics_rows"] = d["term_rows"] + d["class_rows"]
            if empty_documents:
                a["empty_documents"] = _count(
                    conn,
                    """SELECT 1 FROM scirag.documents d
                    WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.document_id = d.id)""",
                )
            conn.rollback()
            return report
        a["tombstone_chains_shortened"] = collapse_tombstone_chains(conn)
        a["mentions_on_tombstones"] = move_mentions_off_tombstones(conn)
        a["relationships_on_tombstones"] = move_relationships_off_tombstones(conn)
        a["relationships_without_evidence"] = conn.execute(
            f"DELETE FROM scirag.kg_relationships WHERE id IN ({GRAPH_GARBAGE['relationships_without_evidence']})"
        ).rowcount
        a["stale_communities"] = conn.execute(
            f"DELETE FROM scirag.kg_communities WHERE id IN ({GRAPH_GARBAGE['stale_communities']})"
        ).rowcount
        a["orphan_entities"] = conn.execute(
            f"DELETE FROM scirag.kg_entities WHERE id IN ({GRAPH_GARBAGE['orphan_entities']})"
        ).rowcount
        a["dangling_citations"] = conn.execute(
            f"UPDATE scirag.document_citations SET cited_document_id = NULL WHERE id IN ({GRAPH_GARBAGE['dangling_citations']})"
        ).rowcount
        if empty_documents:
            a["empty_documents"] = conn.execute(
                """DELETE FROM scirag.documents d
                   WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.document_id = d.id)"""
            ).rowcount
        a["postings_of_deleted_chunks"] = remove_postings_of_deleted_chunks(conn)
        a["keyword_statistics_rows"] = rebuild_keyword_stats(conn)
        from scirag.graph.extract import resolve_citations

        resolve_citations(conn)  # an unresolved DOI may name another corpus document
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return report
