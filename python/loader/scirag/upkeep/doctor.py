"""`scirag doctor`: one report of what is wrong with a scirag database, each finding
with the command that fixes it.

Every check is a small function returning a Finding (also when all is well, so the
report lists what was checked). Severity ``problem`` makes the command exit non-zero;
``warning`` is reported only (work not done yet, such as chunks the graph builder has
not read). The checks run as the connecting login (an admin or the loader role):
they must see every row, whatever the scope settings say.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

import psycopg

SAMPLES = 5


@dataclass
class Finding:
    check: str
    severity: str  # ok | warning | problem
    count: int
    message: str
    fix: str | None = None
    samples: list = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def _ok(check: str, message: str) -> Finding:
    return Finding(check, "ok", 0, message)


def _rows(conn: psycopg.Connection, sql: str, params=()) -> list[tuple]:
    return conn.execute(sql, params).fetchall()


# ---------------------------------------------------------------------------------------
# Configuration the checks compare against
# ---------------------------------------------------------------------------------------


def configured_embedding_version(conn: psycopg.Connection) -> str:
    """The version string the configured embedder stamps on rows: model/dimension
    (scirag_helpers.embedder.VERSION has the same shape)."""
    model, dim = conn.execute(
        """SELECT max(value) FILTER (WHERE key = 'embedding_model'), max(value) FILTER (WHERE key = 'embedding_dim')
           FROM scirag.settings"""
    ).fetchone()
    return f"{model}/{dim}"


# Bounds of the database-wide knobs: (kind, lower, upper) for numbers, a set for words.
# The graph bounds are the clamps search_graph / search_community apply, so a value
# outside them is silently not what the admin asked for.
SETTING_BOUNDS = {
    ("settings", "bm25_k1"): ("float", 0.0, 3.0),
    ("settings", "bm25_b"): ("float", 0.0, 1.0),
    ("settings", "bm25_proximity"): ("float", 0.0, 2.0),
    ("settings", "embedding_dim"): ("int", 1, 16000),
    ("kg_options", "max_seeds"): ("int", 1, 50),
    ("kg_options", "max_fanout"): ("int", 1, 100),
    ("kg_options", "max_entities"): ("int", 1, 5000),
    ("kg_options", "mentions_per_entity"): ("int", 1, 500),
    ("kg_options", "community_top"): ("int", 1, 50),
    ("kg_options", "rank_by"): {"hops", "confidence"},
    ("kg_options", "min_confidence"): {"", "0.4", "0.7", "1.0", "1"},
    ("kg_options", "citation_hop"): {"on", "off"},
    ("kg_options", "question_entities"): {"offline", "model"},
}


def setting_violation(value: str, bound) -> str | None:
    """Why value breaks bound, or None."""
    if isinstance(bound, set):
        return None if value.strip() in bound else f"not one of {', '.join(sorted(repr(b) for b in bound))}"
    kind, lo, hi = bound
    try:
        num = int(value) if kind == "int" else float(value)
    except ValueError:
        return f"not a{'n integer' if kind == 'int' else ' number'}"
    return None if lo <= num <= hi else f"outside [{lo}, {hi}]"


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def check_stale_embeddings(conn) -> Finding:
    version = configured_embedding_version(conn)
    rows = _rows(
        conn,
        """SELECT embedding_version, count(*) FROM scirag.chunks
                          WHERE embedding IS NOT NULL AND embedding_version IS DISTINCT FROM %s
                          GROUP BY 1 ORDER BY 2 DESC""",
        (version,),
    )
    n = sum(r[1] for r in rows)
    if not n:
        return _ok("stale_embeddings", f"every embedded chunk is {version}")
    return Finding(
        "stale_embeddings",
        "problem",
        n,
        f"{n} chunk(s) embedded by another model than the configured {version}: their vectors "
        "do not compare with query vectors",
        "scirag reembed",
        [f"{v}: {c}" for v, c in rows[:SAMPLES]],
    )


def check_empty_documents(conn) -> Finding:
    rows = _rows(
        conn,
        """SELECT d.id, d.external_id FROM scirag.documents d
                          WHERE NOT EXISTS (SELECT 1 FROM scirag.chunks c WHERE c.document_id = d.id)
                          ORDER BY d.id""",
    )
    if not rows:
        return _ok("empty_documents", "every document has chunks")
    return Finding(
        "empty_documents",
        "problem",
        len(rows),
        f"{len(rows)} document(s) without chunks: nothing of them can be retrieved",
        "scirag gc --apply --empty-documents (then re-ingest them with scirag ingest)",
        [f"{i} {e}" for i, e in rows[:SAMPLES]],
    )


NEAR_IDENTICAL = 0.95  # title similarity (difflib ratio of normalised titles) that counts as the same title


def duplicate_groups(conn) -> list[tuple[str, list[int], list[str]]]:
    """Probable duplicates: (reason, ids, external ids), one group per shared DOI, per
    normalised title (kg_normalize: case, punctuation and plural s do not count), and
    per pair of near-identical titles (a typo, a dropped word). The same title under two
    different DOIs is two works (a preprint and its article) and is not reported."""
    rows = _rows(
        conn,
        """
        SELECT 'same DOI ' || lower(doi), array_agg(id ORDER BY id), array_agg(external_id ORDER BY id)
        FROM scirag.documents WHERE doi IS NOT NULL GROUP BY lower(doi) HAVING count(*) > 1
        UNION ALL
        SELECT 'same title "' || left(min(title), 60) || '"', array_agg(id ORDER BY id), array_agg(external_id ORDER BY id)
        FROM scirag.documents GROUP BY scirag.kg_normalize(title)
        HAVING count(*) > 1 AND scirag.kg_normalize(min(title)) <> '' AND count(DISTINCT lower(doi)) <= 1""",
    )
    groups = [(r[0], list(r[1]), list(r[2])) for r in rows]
    grouped = {frozenset(ids) for _, ids, _ in groups}
    docs = _rows(conn, "SELECT id, external_id, scirag.kg_normalize(title), lower(doi) FROM scirag.documents")
    # Near-identical titles, without comparing every pair: neighbours in two sort orders
    # (by the title, and by its reversed word list) catch an edit near either end.
    import difflib

    pairs = set()
    for order in (lambda d: d[2], lambda d: " ".join(reversed(d[2].split()))):
        ranked = sorted((d for d in docs if d[2]), key=order)
        for a, b in zip(ranked, ranked[1:]):
            if a[2] == b[2] or (a[3] and b[3] and a[3] != b[3]):
                continue  # equal titles are grouped above; two DOIs are two works
            if difflib.SequenceMatcher(None, a[2], b[2]).ratio() >= NEAR_IDENTICAL:
                pairs.add(tuple(sorted((a, b))))
    for a, b in sorted(pairs):
        if frozenset((a[0], b[0])) not in grouped:
            groups.append((f'near-identical titles "{a[2][:60]}"', [a[0], b[0]], [a[1], b[1]]))
    return groups


def check_duplicate_documents(conn) -> Finding:
    groups = duplicate_groups(conn)
    if not groups:
        return _ok("duplicate_documents", "no two documents share a DOI or a normalised title")
    extra = sum(len(ids) - 1 for _, ids, _ in groups)
    return Finding(
        "duplicate_documents",
        "problem",
        extra,
        f"{len(groups)} group(s) of probable duplicate documents ({extra} extra copies): "
        "duplicates double-count evidence in answers",
        "scirag dedupe --apply (keeps the first-ingested copy of each group)",
        [f"{reason}: {', '.join(ext)}" for reason, _, ext in groups[:SAMPLES]],
    )


def database_default(conn, name: str) -> str | None:
    """The value ALTER DATABASE ... SET gave a setting in this database (None if none)."""
    row = conn.execute(
        """SELECT split_part(c, '=', 2) FROM pg_db_role_setting s, unnest(s.setconfig) AS c
           WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND s.setrole = 0 AND split_part(c, '=', 1) = %s""",
        (name,),
    ).fetchone()
    return row[0] if row else None


def check_retracted_in_default_scope(conn) -> Finding:
    rows = _rows(conn, "SELECT id, external_id, doi FROM scirag.documents WHERE retracted ORDER BY id")
    if not rows:
        return _ok("retracted_in_default_scope", "no retracted documents")
    default = (database_default(conn, "scirag.exclude_retracted") or "").strip().lower()
    if default in ("on", "true"):
        return Finding(
            "retracted_in_default_scope",
            "ok",
            0,
            f"{len(rows)} retracted document(s), excluded from raw retrieval by the database default "
            "(answers always exclude them)",
        )
    return Finding(
        "retracted_in_default_scope",
        "problem",
        len(rows),
        f"{len(rows)} retracted document(s) reachable through scirag.retrieve under default settings "
        "(answers exclude them; raw retrieval keeps them unless scirag.exclude_retracted = on)",
        "scirag retractions --remove --apply (delete them), or scirag retractions --exclude-by-default",
        [f"{i} {e} doi:{d}" for i, e, d in rows[:SAMPLES]],
    )


# -- keyword statistics: the posting layout lives in this one function --------------------


def postings_sql(conn) -> str:
    """Every posting as (lexeme, license, source, chunk_id, dl). The layout belongs to
    the keyword layer (kw_postings rows, plus compacted kw_blocks arrays when that table
    exists); doctor and gc read postings only through this."""
    parts = ["SELECT lexeme, license::text AS license, source, chunk_id, dl FROM scirag.kw_postings"]
    if conn.execute("SELECT to_regclass('scirag.kw_blocks') IS NOT NULL").fetchone()[0]:
        parts.append(
            "SELECT b.lexeme, b.license::text, b.source, u.chunk_id, u.dl "
            "FROM scirag.kw_blocks b, unnest(b.chunk_ids, b.dls) AS u(chunk_id, dl)"
        )
    return " UNION ALL ".join(parts)


def keyword_drift(conn) -> dict:
    """Disagreements between the BM25 statistics and the postings: term rows whose df
    is not the number of postings of that (lexeme, class), class rows whose chunk count
    or total length is not what the postings add up to, and postings of chunks that no
    longer exist (or are section chunks, which are never indexed)."""
    p = postings_sql(conn)
    terms = conn.execute(f"""
        WITH p AS (SELECT lexeme, license, source, count(*) AS df FROM ({p}) x GROUP BY 1, 2, 3)
        SELECT count(*) FROM p FULL JOIN (SELECT lexeme, license::text AS license, source, df FROM scirag.kw_term_stats) s
          USING (lexeme, license, source)
        WHERE p.df IS DISTINCT FROM s.df""").fetchone()[0]
    classes = conn.execute(f"""
        WITH c AS (SELECT license, source, count(*) AS n, sum(dl) AS dl
                   FROM (SELECT DISTINCT chunk_id, license, source, dl FROM ({p}) x) y GROUP BY 1, 2)
        SELECT count(*) FROM c FULL JOIN (SELECT license::text AS license, source, n_chunks, sum_dl FROM scirag.kw_class_stats) s
          USING (license, source)
        WHERE c.n IS DISTINCT FROM s.n_chunks OR c.dl IS DISTINCT FROM s.sum_dl""").fetchone()[0]
    orphans = conn.execute(f"""
        SELECT count(*) FROM ({p}) x LEFT JOIN scirag.chunks c ON c.id = x.chunk_id
        WHERE c.id IS NULL OR c.kind = 'section'""").fetchone()[0]
    return {"term_rows": terms, "class_rows": classes, "orphan_postings": orphans}


def check_keyword_statistics(conn) -> Finding:
    d = keyword_drift(conn)
    n = sum(d.values())
    if not n:
        return _ok("keyword_statistics", "document frequencies and class totals match the postings")
    return Finding(
        "keyword_statistics",
        "problem",
        n,
        f"BM25 statistics disagree with the postings: {d['term_rows']} term row(s), "
        f"{d['class_rows']} class row(s), {d['orphan_postings']} posting(s) of deleted or section chunks",
        "scirag gc --apply",
        [f"{k}: {v}" for k, v in d.items() if v],
    )


def check_index_validity(conn) -> Finding:
    rows = _rows(
        conn,
        """
        SELECT i.indexrelid::regclass::text, am.amname
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'scirag' AND NOT (i.indisvalid AND i.indisready)""",
    )
    if not rows:
        n = conn.execute("""SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                            JOIN pg_am am ON am.oid = c.relam
                            WHERE c.relnamespace = 'scirag'::regnamespace AND am.amname IN ('hnsw', 'gin')""").fetchone()[
            0
        ]
        return _ok("index_validity", f"every scirag index is valid ({n} HNSW/GIN)")
    return Finding(
        "index_validity",
        "problem",
        len(rows),
        f"{len(rows)} invalid index(es) (a failed CREATE INDEX CONCURRENTLY): the planner ignores them",
        "; ".join(f"REINDEX INDEX CONCURRENTLY {name}" for name, _ in rows[:SAMPLES]),
        [f"{name} ({am})" for name, am in rows[:SAMPLES]],
    )


def check_crossref_pending(conn) -> Finding:
    n = conn.execute("SELECT count(*) FROM scirag.documents WHERE doi IS NOT NULL AND crossref IS NULL").fetchone()[0]
    if not n:
        return _ok("crossref_pending", "every document with a DOI has been looked up in Crossref")
    return Finding(
        "crossref_pending",
        "warning",
        n,
        f"{n} document(s) with a DOI never looked up in Crossref: their retraction status is unknown",
        "scirag enrich --missing",
    )


def check_graph_pending(conn) -> Finding:
    n = conn.execute(
        """SELECT count(*) FROM scirag.chunks WHERE kind <> 'section' AND graph_extracted_at IS NULL"""
    ).fetchone()[0]
    if not n:
        return _ok("graph_pending", "every chunk has been graph-extracted")
    return Finding(
        "graph_pending",
        "warning",
        n,
        f"{n} chunk(s) not yet read by the graph builder: the graph layer cannot reach them",
        "scirag graph extract",
    )


# -- graph garbage: the definitions gc deletes by ---------------------------------------

GRAPH_GARBAGE = {
    # mention filed under a merged entity (a merge moves mentions to the survivor)
    "mentions_on_tombstones": """
        SELECT m.entity_id, m.chunk_id, m.surface_key FROM scirag.kg_mentions m
        JOIN scirag.kg_entities e ON e.id = m.entity_id WHERE e.canonical_entity_id IS NOT NULL""",
    # edge with an endpoint that was merged away
    "relationships_on_tombstones": """
        SELECT r.id FROM scirag.kg_relationships r
        JOIN scirag.kg_entities s ON s.id = r.source_entity_id JOIN scirag.kg_entities t ON t.id = r.target_entity_id
        WHERE s.canonical_entity_id IS NOT NULL OR t.canonical_entity_id IS NOT NULL""",
    # edge whose evidence chunk no longer mentions one of its endpoints
    "relationships_without_evidence": """
        SELECT r.id FROM scirag.kg_relationships r
        WHERE NOT EXISTS (SELECT 1 FROM scirag.kg_mentions m WHERE m.chunk_id = r.chunk_id AND m.entity_id = r.source_entity_id)
           OR NOT EXISTS (SELECT 1 FROM scirag.kg_mentions m WHERE m.chunk_id = r.chunk_id AND m.entity_id = r.target_entity_id)""",
    # entity nothing points at: no mention, no edge, not declared, not a tombstone or
    # survivor, not named by an audit row (tombstones and audit rows are kept)
    "orphan_entities": """
        SELECT e.id FROM scirag.kg_entities e
        WHERE NOT e.declared AND e.canonical_entity_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM scirag.kg_mentions m WHERE m.entity_id = e.id OR m.original_entity_id = e.id)
          AND NOT EXISTS (SELECT 1 FROM scirag.kg_relationships r WHERE e.id IN (r.source_entity_id, r.target_entity_id))
          AND NOT EXISTS (SELECT 1 FROM scirag.kg_entities t WHERE t.canonical_entity_id = e.id)
          AND NOT EXISTS (SELECT 1 FROM scirag.entity_resolution_audit a WHERE e.id IN (a.survivor_entity_id, a.merged_entity_id))
          AND NOT EXISTS (SELECT 1 FROM scirag.kg_community_members cm WHERE cm.entity_id = e.id)""",
    # a resolved citation whose cited document is gone (no foreign key: it may be on another shard)
    "dangling_citations": """
        SELECT c.id FROM scirag.document_citations c
        WHERE c.cited_document_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM scirag.documents d WHERE d.id = c.cited_document_id)""",
    # a community built before the last applied merge, or holding a merged entity
    "stale_communities": """
        SELECT k.id FROM scirag.kg_communities k
        WHERE k.built_at < (SELECT max(applied_at) FROM scirag.entity_resolution_audit)
           OR EXISTS (SELECT 1 FROM scirag.kg_community_members cm JOIN scirag.kg_entities e ON e.id = cm.entity_id
                      WHERE cm.community_id = k.id AND e.canonical_entity_id IS NOT NULL)""",
}


def graph_garbage(conn) -> dict[str, int]:
    return {name: conn.execute(f"SELECT count(*) FROM ({sql}) x").fetchone()[0] for name, sql in GRAPH_GARBAGE.items()}


def check_dangling_graph_rows(conn) -> Finding:
    g = graph_garbage(conn)
    dangling = {k: v for k, v in g.items() if v and k != "stale_communities"}
    n = sum(dangling.values())
    if not n:
        return _ok("dangling_graph_rows", "no orphan mentions, relationships, entities or citations")
    return Finding(
        "dangling_graph_rows",
        "problem",
        n,
        "dangling graph rows: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in dangling.items()),
        "scirag gc --apply",
        [f"{k}: {v}" for k, v in dangling.items()],
    )


def check_tombstones(conn) -> Finding:
    total, chained, unaudited = conn.execute("""
        SELECT count(*),
               count(*) FILTER (WHERE s.canonical_entity_id IS NOT NULL),
               count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM scirag.entity_resolution_audit a
                                                  WHERE a.merged_entity_id = t.id))
        FROM scirag.kg_entities t JOIN scirag.kg_entities s ON s.id = t.canonical_entity_id""").fetchone()
    if not chained and not unaudited:
        return _ok("tombstones", f"{total} tombstone(s), each pointing at a live survivor with an audit row")
    if chained:
        return Finding(
            "tombstones",
            "problem",
            chained,
            f"{chained} of {total} tombstone(s) point at another tombstone (a chain of merges): "
            "readers following them take extra hops",
            "scirag gc --apply",
            [f"{unaudited} without an audit row"] if unaudited else [],
        )
    return Finding(
        "tombstones",
        "warning",
        unaudited,
        f"{unaudited} of {total} tombstone(s) have no entity_resolution_audit row (merged outside "
        "scirag graph resolve-entities)",
        "none needed; review how they were merged",
    )


def check_stale_communities(conn) -> Finding:
    n = conn.execute(f"SELECT count(*) FROM ({GRAPH_GARBAGE['stale_communities']}) x").fetchone()[0]
    if not n:
        return _ok("stale_communities", "no community is older than the last entity merge")
    return Finding(
        "stale_communities",
        "problem",
        n,
        f"{n} communit(y/ies) built before the last entity merge: their summaries name merged entities",
        "scirag gc --apply && scirag graph communities",
    )


def check_role_ceilings(conn) -> Finding:
    has_oid = conn.execute("""SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'scirag.role_ceilings'::regclass
                              AND attname = 'role_oid' AND NOT attisdropped)""").fetchone()[0]
    match = "r.oid = c.role_oid AND r.rolname = c.role_name" if has_oid else "r.rolname = c.role_name"
    rows = _rows(
        conn,
        f"""SELECT c.role_name FROM scirag.role_ceilings c
                           WHERE NOT EXISTS (SELECT 1 FROM pg_roles r WHERE {match}) ORDER BY 1""",
    )
    if not rows:
        return _ok("role_ceilings", "every role ceiling names an existing role")
    names = [r[0] for r in rows]
    return Finding(
        "role_ceilings",
        "problem",
        len(rows),
        f"{len(rows)} role ceiling(s) name a role that no longer exists (or was re-created): they apply to nobody",
        "; ".join(f"DELETE FROM scirag.role_ceilings WHERE role_name = '{n}'" for n in names[:SAMPLES]),
        names[:SAMPLES],
    )


def check_settings_bounds(conn) -> Finding:
    bad = []
    for table in ("settings", "kg_options"):
        for key, value in _rows(conn, f"SELECT key, value FROM scirag.{table} ORDER BY key"):
            bound = SETTING_BOUNDS.get((table, key))
            why = setting_violation(value, bound) if bound is not None else None
            if why:
                bad.append((table, key, value, why))
    dim = conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()
    col = conn.execute("""SELECT atttypmod FROM pg_attribute WHERE attrelid = 'scirag.chunks'::regclass
                          AND attname = 'embedding'""").fetchone()
    if dim and col and str(col[0]) != dim[0].strip():
        bad.append(("settings", "embedding_dim", dim[0], f"the chunks.embedding column is vector({col[0]})"))
    if not bad:
        return _ok("settings_bounds", "every setting and graph option is inside its bounds")
    return Finding(
        "settings_bounds",
        "problem",
        len(bad),
        f"{len(bad)} setting(s) outside their bounds: the code clamps or falls back, so they do not mean what they say",
        "; ".join(f"UPDATE scirag.{t} SET value = '<value>' WHERE key = '{k}'" for t, k, _, _ in bad[:SAMPLES]),
        [f"{t}.{k} = {v!r}: {why}" for t, k, v, why in bad[:SAMPLES]],
    )


CHECKS: list[Callable[[psycopg.Connection], Finding]] = [
    check_stale_embeddings,
    check_empty_documents,
    check_duplicate_documents,
    check_retracted_in_default_scope,
    check_keyword_statistics,
    check_index_validity,
    check_crossref_pending,
    check_graph_pending,
    check_dangling_graph_rows,
    check_tombstones,
    check_stale_communities,
    check_role_ceilings,
    check_settings_bounds,
]


def run_doctor(conn: psycopg.Connection, checks=None) -> list[Finding]:
    """Runs every check, each in its own transaction; a check that fails to run is itself a problem."""
    out = []
    for check in checks or CHECKS:
        name = check.__name__.removeprefix("check_")
        try:
            with conn.transaction():
                out.append(check(conn))
        except psycopg.Error as exc:
            out.append(
                Finding(
                    name,
                    "problem",
                    1,
                    f"check failed to run: {str(exc).strip()}",
                    "scirag db init (the schema may be behind the code)",
                )
            )
    return out


def exit_code(findings: list[Finding]) -> int:
    return 1 if any(f.severity == "problem" for f in findings) else 0


def render(findings: list[Finding]) -> str:
    mark = {"ok": "ok  ", "warning": "warn", "problem": "FAIL"}
    lines = []
    for f in findings:
        lines.append(f"[{mark[f.severity]}] {f.check}: {f.message}")
        for s in f.samples:
            lines.append(f"         - {s}")
        if f.fix and f.severity != "ok":
            lines.append(f"         fix: {f.fix}")
    problems = sum(1 for f in findings if f.severity == "problem")
    warnings = sum(1 for f in findings if f.severity == "warning")
    lines.append(f"{len(findings)} checks: {problems} problem(s), {warnings} warning(s)")
    return "\n".join(lines)


def replica_finding(status: dict) -> Finding:
    """Replication as scirag.routing.replica_status() saw it: each standby's replay lag
    (bytes of WAL the primary wrote that it has not replayed; seconds as the primary
    measured them), and every read node of SCIRAG_READ_DSN that does not answer."""
    standbys = status.get("standbys", [])
    nodes = status.get("read_nodes", [])
    down = [n for n in nodes if not n.get("reachable")]
    samples = [
        f"{s['name'] or '(unnamed)'}: {s['state']} ({s['sync_state']}), replay lag "
        f"{s['replay_lag_bytes'] or 0} bytes, {s['replay_lag_seconds']:.3f} s"
        for s in standbys
    ] + [
        f"read node {n['name']}"
        + (f" ({n['host']})" if n.get("host") else "")
        + ": "
        + (
            "down"
            if not n.get("reachable")
            else ("standby" if n.get("standby") else "PRIMARY (not a standby)")
            + (f", replay lag {n['replay_lag_bytes']} bytes" if "replay_lag_bytes" in n else "")
        )
        for n in nodes
    ]
    if not status.get("primary", {}).get("reachable"):
        return Finding("replicas", "problem", 1, "the primary does not answer", "check SCIRAG_DSN", samples)
    if status["primary"].get("standby"):
        return Finding(
            "replicas", "ok", 0, "connected to a hot standby (read-only): lag is reported by the primary", None, samples
        )
    if down:
        return Finding(
            "replicas",
            "warning",
            len(down),
            f"{len(down)} read node(s) of SCIRAG_READ_DSN do not answer: reads fall back to the others or the primary",
            "start the standby, or remove it from SCIRAG_READ_DSN",
            samples,
        )
    if not standbys and not nodes:
        return _ok("replicas", "no standbys (SCIRAG_READ_DSN unset, none attached): every read runs on the primary")
    return Finding("replicas", "ok", 0, f"{len(standbys)} standby(s) streaming", None, samples)
