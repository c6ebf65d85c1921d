"""The fixes `scirag doctor` names: re-embedding stale chunks, removing duplicate
documents, and acting on retracted documents."""

from __future__ import annotations

from typing import Callable

import psycopg
from psycopg import sql

from scirag.upkeep.doctor import configured_embedding_version, duplicate_groups


def reembed_stale(
    conn: psycopg.Connection, embedder=None, batch: int = 64, progress: Callable[[str], None] | None = None
) -> tuple[int, str]:
    """Re-embeds every embedded chunk whose embedding_version is not the configured
    embedder's, one transaction per batch; returns (chunks, version)."""
    version = configured_embedding_version(conn)
    conn.commit()
    if embedder is None:
        from scirag_helpers.embedder import Embedder

        dim = int(version.rsplit("/", 1)[1])
        embedder = Embedder(threads=2, expected_dim=dim)
    if embedder.version != version:
        raise RuntimeError(
            f"the configured embedder is {version} (scirag.settings embedding_model/embedding_dim), "
            f"but this loader embeds with {embedder.version}: install or configure that model first"
        )
    done = 0
    while True:
        rows = conn.execute(
            """SELECT id, content FROM scirag.chunks
               WHERE embedding IS NOT NULL AND embedding_version IS DISTINCT FROM %s
               ORDER BY id LIMIT %s""",
            (version, batch),
        ).fetchall()
        if not rows:
            conn.commit()
            return done, version
        vecs = embedder.embed([r[1] for r in rows])
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE scirag.chunks SET embedding = %s::vector, embedding_version = %s WHERE id = %s",
                [("[" + ",".join(f"{x:.7g}" for x in v) + "]", version, r[0]) for r, v in zip(rows, vecs)],
            )
        conn.commit()
        done += len(rows)
        if progress:
            progress(f"re-embedded {done} chunk(s)")


def dedupe(conn: psycopg.Connection, apply: bool = False) -> list[tuple[str, str, list[str]]]:
    """(reason, kept external id, deleted external ids) per duplicate group; deletes the
    later copies when apply. A document in two groups is deleted once."""
    groups = duplicate_groups(conn)
    out, doomed = [], set()
    for reason, ids, exts in groups:
        keep = ids[0]
        if keep in doomed:  # already going as a copy in another group: nothing to keep here
            continue
        drop = [(i, e) for i, e in zip(ids[1:], exts[1:]) if i not in doomed]
        doomed.update(i for i, _ in drop)
        if drop:
            out.append((reason, exts[0], [e for _, e in drop]))
    if apply and doomed:
        conn.execute("DELETE FROM scirag.documents WHERE id = ANY (%s)", (sorted(doomed),))
    conn.commit()
    return out


def retracted_documents(conn: psycopg.Connection) -> list[tuple]:
    """(id, external id, DOI, DOI of the retraction notice) of every retracted document."""
    rows = conn.execute(
        """SELECT id, external_id, doi, crossref -> 'retraction' ->> 'doi' FROM scirag.documents
           WHERE retracted ORDER BY id"""
    ).fetchall()
    conn.commit()
    return rows


def exclude_retracted_by_default(conn: psycopg.Connection) -> None:
    """Raw retrieval drops retracted documents unless a session turns it off (needs the
    database owner or a superuser)."""
    dbname = conn.execute("SELECT current_database()").fetchone()[0]
    conn.execute(sql.SQL("ALTER DATABASE {} SET scirag.exclude_retracted = 'on'").format(sql.Identifier(dbname)))
    conn.commit()
