"""A library of documents, managed: list, show, delete, correct, re-parse (issue 25).

One set of functions behind `scirag docs ...` and the REST /v1/documents endpoints.
Writes go through the SQL functions of functions/document_admin (scirag.document_delete,
scirag.document_set, scirag.document_clear), each in one transaction, as the loader
role: the database, not this module, decides who may change the library.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from scirag.ingest.manifest import Entry

LIST_SQL = """SELECT d.id AS document_id, d.external_id, d.title, d.authors, d.year, d.doi, d.license::text AS license,
                     d.source, d.retracted, d.parser, d.pages, d.ingested_at,
                     (SELECT count(*) FROM scirag.chunks c WHERE c.document_id = d.id AND c.kind <> 'section') AS chunks
              FROM scirag.documents d
              WHERE (%(license)s::text IS NULL OR d.license::text = %(license)s)
                AND (%(source)s::text IS NULL OR d.source = %(source)s)
              ORDER BY d.id LIMIT %(limit)s OFFSET %(offset)s"""
# as the loader, which sees every row (the reader API would apply the default scope)
SHOW_SQL = """SELECT id AS document_id, external_id, title, authors, year, journal, doi, arxiv_id,
                     license::text AS license, source, retracted, parser, pages, source_path, ingested_at,
                     metadata_inferred
              FROM scirag.documents WHERE id = %s"""
# the file the document was last stored from (absolute since issue 25)
SOURCE_SQL = """SELECT r.path FROM scirag.ingest_reports r
                WHERE r.document_id = %s AND r.path IS NOT NULL AND r.status <> 'failed'
                ORDER BY r.id DESC LIMIT 1"""
MAX_LIST = 10_000


class LibraryError(ValueError):
    """A library command that cannot be done; the message says why and what to do."""


def _rows(cur) -> list[dict]:
    cols = [d.name for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def list_documents(
    conn: psycopg.Connection,
    license: str | None = None,
    source: str | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> list[dict]:
    if not 1 <= limit <= MAX_LIST or offset < 0:
        raise LibraryError(f"limit must be between 1 and {MAX_LIST} and offset at least 0")
    return _rows(conn.execute(LIST_SQL, {"license": license, "source": source, "limit": limit, "offset": offset}))


def resolve(conn: psycopg.Connection, ref: str) -> int:
    doc = conn.execute("SELECT scirag.document_ref(%s, 'scirag docs')", (ref,)).fetchone()[0]
    if doc is None:
        raise LibraryError(f"no document '{ref}' (give a manifest id or a numeric id: scirag docs list)")
    return doc


def show_document(conn: psycopg.Connection, ref: str) -> dict:
    doc = resolve(conn, ref)
    (row,) = _rows(conn.execute(SHOW_SQL, (doc,)))
    row["layers"] = conn.execute("SELECT scirag.document_counts(%s)", (doc,)).fetchone()[0]
    src = conn.execute(SOURCE_SQL, (doc,)).fetchone()
    row["stored_from"] = src[0] if src else None
    return row


def delete_documents(conn: psycopg.Connection, refs: list[str]) -> list[dict]:
    """Deletes every document of refs in ONE transaction (an unknown ref deletes nothing)."""
    out = []
    with conn.transaction():
        for ref in refs:
            result = conn.execute("SELECT scirag.document_delete(%s)", (ref,)).fetchone()[0]
            if result is None:
                raise LibraryError(f"no document '{ref}': nothing was deleted")
            out.append(result)
    return out


def set_metadata(conn: psycopg.Connection, ref: str, changes: dict) -> dict:
    if not changes:
        raise LibraryError(
            "nothing to set: give --title, --authors, --year, --doi, --journal, --arxiv-id, --license or --source"
        )
    with conn.transaction():
        result = conn.execute("SELECT scirag.document_set(%s, %s)", (ref, Jsonb(changes))).fetchone()[0]
    if result is None:
        raise LibraryError(f"no document '{ref}' (give a manifest id or a numeric id: scirag docs list)")
    return result


def reparse_entry(conn: psycopg.Connection, ref: str) -> Entry:
    """The manifest entry that re-ingests a stored document from the file it was stored
    from, with its stored metadata and rights (all stated, so nothing is re-guessed)."""
    doc = resolve(conn, ref)
    row = conn.execute(
        """SELECT external_id, title, authors, year, doi, journal, arxiv_id, license::text, source,
                  metadata_inferred FROM scirag.documents WHERE id = %s""",
        (doc,),
    ).fetchone()
    src = conn.execute(SOURCE_SQL, (doc,)).fetchone()
    conn.commit()
    if src is None:
        raise LibraryError(
            f"document '{row[0]}' was not stored from a file (manifest text): nothing to re-parse; "
            "ingest its manifest line again with --replace"
        )
    path = Path(src[0])
    if not path.is_file():
        raise LibraryError(
            f"document '{row[0]}' was stored from {path}, which no longer exists: "
            "ingest the file again with --replace (the document keeps its id)"
        )
    ext, title, authors, year, doi, journal, arxiv_id, license_, source, inferred = row
    return Entry(
        line_no=1,
        id=ext,
        title=title,
        path=path,
        authors=list(authors or []),
        year=year,
        doi=doi,
        journal=journal,
        source=source,
        license=license_,
        arxiv_id=arxiv_id,
        stated=frozenset(("id", "title", "authors", "year", "doi", "journal", "arxiv_id", "license", "source")),
        inferred=list(inferred or []),
    )
