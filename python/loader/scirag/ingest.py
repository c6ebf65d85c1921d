"""parse -> chunk -> classify license -> deduplicate -> embed -> store (one transaction)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from scirag.chunk import chunk_document, content_hash
from scirag.db import echo
from scirag.manifest import Entry, ManifestError, read_manifest
from scirag.parse import ParseError, parse_file, parse_text
from scirag_helpers.embedder import Embedder, EmbeddingError, to_pgvector

CHUNK_COLUMNS = ("document_id", "ordinal", "parent_ordinal", "kind", "level", "section_path", "heading",
                 "is_table", "content", "token_count", "line_start", "line_end", "page_start", "page_end",
                 "license", "source", "embedding", "embedding_version")


@dataclass
class Outcome:
    status: str          # added | duplicate | failed
    reason: str | None = None
    document_id: int | None = None
    chunks: int = 0


class Ingester:
    def __init__(self, conn: psycopg.Connection, embedder: Embedder | None = None,
                 target_tokens: int = 800, overlap_tokens: int = 150):
        self.conn = conn
        self.embedder = embedder or Embedder(threads=2, expected_dim=self._column_dim())
        self.target_tokens, self.overlap_tokens = target_tokens, overlap_tokens

    def _column_dim(self) -> int:
        return int(self.conn.execute(
            "SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])

    def ingest_entry(self, entry: Entry, run_id: int) -> Outcome:
        if entry.path is not None:
            doc = parse_file(entry.path)
        else:
            doc = parse_text(entry.text, fmt=entry.fmt, name=entry.id)
        chunks = chunk_document(doc, entry.title, self.target_tokens, self.overlap_tokens)
        if not any(c.kind != "section" for c in chunks):
            return Outcome("failed", "no usable text after parsing and chunking")
        digest = content_hash(chunks)
        dup = self.conn.execute("SELECT id, external_id FROM scirag.documents WHERE content_hash = %s",
                                (digest,)).fetchone()
        self.conn.commit()
        if dup:
            return Outcome("duplicate", f"same content as document {dup[1]}", dup[0])
        taken = self.conn.execute("SELECT 1 FROM scirag.documents WHERE external_id = %s", (entry.id,)).fetchone()
        self.conn.commit()
        if taken:
            return Outcome("failed", f"id '{entry.id}' is already used by a document with different content")
        leaves = [c for c in chunks if c.kind != "section"]
        vectors = dict(zip((c.ordinal for c in leaves), self.embedder.embed([c.content for c in leaves])))
        try:
            with self.conn.transaction():
                doc_id = self.conn.execute(
                    """INSERT INTO scirag.documents (external_id, title, authors, year, journal, doi, license,
                           source, content_hash, source_path, parser, pages, ingest_run_id)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
                    (entry.id, entry.title, entry.authors, entry.year, entry.journal, entry.doi, entry.license,
                     entry.source, digest, str(entry.path) if entry.path else None, doc.parser, doc.pages, run_id),
                ).fetchone()[0]
                self._insert_chunks(doc_id, entry, chunks, vectors)
        except psycopg.errors.UniqueViolation:
            # another loader stored the same content or id between our check and our insert
            return Outcome("duplicate", "stored concurrently by another run")
        return Outcome("added", None, doc_id, len(chunks))

    def _insert_chunks(self, doc_id: int, entry: Entry, chunks, vectors) -> None:
        # executemany, not COPY: COPY FROM is refused on tables with row-level security.
        cols = ", ".join(CHUNK_COLUMNS)
        marks = ", ".join(["%s"] * len(CHUNK_COLUMNS))
        rows = []
        for c in chunks:
            vec = vectors.get(c.ordinal) if c.kind != "section" else None
            rows.append((doc_id, c.ordinal, c.parent_ordinal, c.kind, c.level, c.section_path,
                         c.heading, c.is_table, c.content.replace("\x00", ""), c.token_count,
                         c.line_start, c.line_end, c.page_start, c.page_end, entry.license,
                         entry.source, to_pgvector(vec) if vec is not None else None,
                         self.embedder.version if vec is not None else None))
        with self.conn.cursor() as cur:
            cur.executemany(f"INSERT INTO scirag.chunks ({cols}) VALUES ({marks})", rows)


def ingest_manifest(conn: psycopg.Connection, manifest: Path, ingester: Ingester | None = None) -> dict:
    """Ingests every manifest line; a failing document becomes a report row and the run goes on."""
    entries = list(read_manifest(manifest))
    ingester = ingester or Ingester(conn)
    run_id = conn.execute(
        "INSERT INTO scirag.ingest_runs (manifest, embedding_version) VALUES (%s, %s) RETURNING id",
        (str(manifest), ingester.embedder.version)).fetchone()[0]
    conn.commit()
    counts = {"added": 0, "duplicate": 0, "failed": 0}
    for i, (line_no, entry) in enumerate(entries, 1):
        started = time.monotonic()
        ident = getattr(entry, "id", None)
        path = str(entry.path) if isinstance(entry, Entry) and entry.path else None
        if isinstance(entry, ManifestError):
            outcome = Outcome("failed", str(entry))
        else:
            try:
                outcome = ingester.ingest_entry(entry, run_id)
            except (psycopg.OperationalError, psycopg.InterfaceError, EmbeddingError):
                raise  # the server or the model is gone: nothing later could succeed either
            except Exception as exc:  # noqa: BLE001 - one bad document is a report row, never a crashed corpus
                conn.rollback()
                kind = "parse error" if isinstance(exc, ParseError) else type(exc).__name__
                outcome = Outcome("failed", f"{kind}: {exc}")
        seconds = time.monotonic() - started
        counts[outcome.status] += 1
        conn.execute(
            """INSERT INTO scirag.ingest_reports (run_id, line_no, external_id, path, status, reason,
                   document_id, chunks, seconds) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            (run_id, line_no, ident, path, outcome.status, outcome.reason, outcome.document_id,
             outcome.chunks, seconds))
        conn.commit()
        detail = f"{outcome.chunks} chunks" if outcome.status == "added" else (outcome.reason or "")
        echo(f"[{i}/{len(entries)}] {ident or f'line {line_no}'}: {outcome.status} ({detail}, {seconds:.1f}s)")
    conn.execute("UPDATE scirag.ingest_runs SET finished_at = now(), added = %s, duplicate = %s, failed = %s "
                 "WHERE id = %s", (counts["added"], counts["duplicate"], counts["failed"], run_id))
    conn.commit()
    echo(f"ingest run {run_id}: {counts['added']} added, {counts['duplicate']} duplicate, {counts['failed']} failed")
    return {"run_id": run_id, **counts}
