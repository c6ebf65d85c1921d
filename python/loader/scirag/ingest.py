"""parse -> chunk -> classify license -> deduplicate -> embed -> store (one transaction)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from scirag.chunk import chunk_document, content_hash
from scirag.db import echo
from scirag.manifest import Entry, ManifestError, read_manifest
from scirag.parse import ParseError
from scirag.parse_guard import GuardedParser, ParseBudget
from scirag_helpers.embedder import Embedder, EmbeddingError, to_pgvector

CHUNK_COLUMNS = (
    "document_id",
    "ordinal",
    "parent_ordinal",
    "kind",
    "level",
    "section_path",
    "heading",
    "is_table",
    "content",
    "token_count",
    "line_start",
    "line_end",
    "page_start",
    "page_end",
    "license",
    "source",
    "embedding",
    "embedding_version",
    "is_reference",
    "body",
)


@dataclass
class Outcome:
    status: str  # added | duplicate | failed
    reason: str | None = None
    document_id: int | None = None
    chunks: int = 0


class Ingester:
    def __init__(
        self,
        conn: psycopg.Connection,
        embedder: Embedder | None = None,
        target_tokens: int = 800,
        overlap_tokens: int = 150,
        budget: ParseBudget | None = None,
        parser: GuardedParser | None = None,
    ):
        self.conn = conn
        self.embedder = embedder or Embedder(threads=2, expected_dim=self._column_dim())
        self.target_tokens, self.overlap_tokens = target_tokens, overlap_tokens
        # every document is parsed in a worker process within a time and memory budget
        self.parser = parser or GuardedParser(budget)

    def close(self) -> None:
        """Ends the parse worker (it also ends by itself when this process exits)."""
        self.parser.close()

    def _column_dim(self) -> int:
        return int(self.conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])

    def ingest_entry(self, entry: Entry, run_id: int, base: Path | None = None) -> Outcome:
        if entry.path is not None:
            doc = self.parser.parse_file(entry.path)
        else:
            doc = self.parser.parse_text(entry.text, fmt=entry.fmt, name=entry.id)
        chunks = chunk_document(doc, entry.title, self.target_tokens, self.overlap_tokens)
        if not any(c.kind != "section" for c in chunks):
            return Outcome("failed", "no usable text after parsing and chunking")
        digest = content_hash(chunks)
        dup = self.conn.execute(
            "SELECT id, external_id, license::text FROM scirag.documents WHERE content_hash = %s", (digest,)
        ).fetchone()
        self.conn.commit()
        if dup:
            return self._duplicate(entry, *dup)
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
                           source, content_hash, source_path, parser, pages, ingest_run_id, arxiv_id,
                           metadata_inferred)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
                    (
                        entry.id,
                        entry.title,
                        entry.authors,
                        entry.year,
                        entry.journal,
                        entry.doi,
                        entry.license,
                        entry.source,
                        digest,
                        shown_path(entry.path, entry.base or base),
                        doc.parser,
                        doc.pages,
                        run_id,
                        entry.arxiv_id,
                        entry.inferred,
                    ),
                ).fetchone()[0]
                self._insert_chunks(doc_id, entry, chunks, vectors)
        except psycopg.errors.UniqueViolation:
            # another loader stored the same content or id between our check and our insert
            return Outcome("duplicate", "stored concurrently by another run")
        # A damaged file whose readable pages were stored says so in the report row.
        return Outcome("added", f"partial: {doc.partial}" if doc.partial else None, doc_id, len(chunks))

    def _duplicate(self, entry: Entry, doc_id: int, external_id: str, stored: str) -> Outcome:
        """Same content is stored once. A license stated now (manifest line or --license)
        replaces a stored 'unknown' (nobody had said; the trigger re-files the chunks), so
        "re-run with --license" works; a stated license is never overwritten."""
        reason = f"same content as document {external_id}"
        if "license" in entry.stated and entry.license != stored:
            if stored != "unknown":
                return Outcome(
                    "duplicate", f"{reason} (stored license {stored} kept; this run says {entry.license})", doc_id
                )
            with self.conn.transaction():
                self.conn.execute(
                    "UPDATE scirag.documents SET license = %s WHERE id = %s AND license = 'unknown'",
                    (entry.license, doc_id),
                )
            return Outcome("duplicate", f"{reason}; license unknown -> {entry.license}", doc_id)
        return Outcome("duplicate", reason, doc_id)

    def _insert_chunks(self, doc_id: int, entry: Entry, chunks, vectors) -> None:
        # executemany, not COPY: COPY FROM is refused on tables with row-level security.
        cols = ", ".join(CHUNK_COLUMNS)
        marks = ", ".join(["%s"] * len(CHUNK_COLUMNS))
        rows = []
        for c in chunks:
            vec = vectors.get(c.ordinal) if c.kind != "section" else None
            rows.append(
                (
                    doc_id,
                    c.ordinal,
                    c.parent_ordinal,
                    c.kind,
                    c.level,
                    c.section_path,
                    c.heading,
                    c.is_table,
                    c.content.replace("\x00", ""),
                    c.token_count,
                    c.line_start,
                    c.line_end,
                    c.page_start,
                    c.page_end,
                    entry.license,
                    entry.source,
                    to_pgvector(vec) if vec is not None else None,
                    self.embedder.version if vec is not None else None,
                    c.is_reference,
                    c.body.replace("\x00", ""),
                )
            )
        with self.conn.cursor() as cur:
            cur.executemany(f"INSERT INTO scirag.chunks ({cols}) VALUES ({marks})", rows)


def shown_path(path: Path | None, base: Path | None) -> str | None:
    """documents.source_path as readers may see it: the path relative to the manifest's
    folder, or only the file name for a file outside it (--allow-outside). The server
    path stays in ingest_reports, which only the loader reads."""
    if path is None:
        return None
    if base is not None:
        try:
            return str(Path(path).resolve().relative_to(Path(base).resolve()))
        except ValueError:
            pass
    return Path(path).name


def _report_text(value: str | None) -> str | None:
    """Text a report row can always store: no NUL, no lone surrogates."""
    if value is None:
        return None
    return value.replace("\x00", "\\0").encode("utf-8", "replace").decode("utf-8")


def ingest_manifest(
    conn: psycopg.Connection, manifest: Path, ingester: Ingester | None = None, allow_outside: bool = False
) -> dict:
    """Ingests every manifest line; a failing document becomes a report row and the run goes on.

    Paths must lie inside the manifest's folder unless ``allow_outside``."""
    entries = list(read_manifest(manifest, allow_outside=allow_outside))
    return ingest_entries(conn, entries, str(manifest), ingester, manifest.parent)


def ingest_entries(
    conn: psycopg.Connection, entries: list, label: str, ingester: Ingester | None = None, base: Path | None = None
) -> dict:
    """Ingests (line_no, Entry | ManifestError) items as one run named label (a manifest
    path, or the paths given to `scirag ingest`); base: the folder source paths are
    shown relative to, for entries that carry no base of their own."""
    ingester = ingester or Ingester(conn)
    run_id = conn.execute(
        "INSERT INTO scirag.ingest_runs (manifest, embedding_version) VALUES (%s, %s) RETURNING id",
        (_report_text(label), ingester.embedder.version),
    ).fetchone()[0]
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
                outcome = ingester.ingest_entry(entry, run_id, base)
            except (psycopg.OperationalError, psycopg.InterfaceError, EmbeddingError):
                raise  # the server or the model is gone: nothing later could succeed either
            except Exception as exc:  # one bad document is a report row, never a crashed corpus
                conn.rollback()
                kind = "parse error" if isinstance(exc, ParseError) else type(exc).__name__
                outcome = Outcome("failed", f"{kind}: {exc}")
        seconds = time.monotonic() - started
        counts[outcome.status] += 1
        # The report insert is the one thing that must not fail: its text is made storable.
        conn.execute(
            """INSERT INTO scirag.ingest_reports (run_id, line_no, external_id, path, status, reason,
                   document_id, chunks, seconds) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                run_id,
                line_no,
                _report_text(ident),
                _report_text(path),
                outcome.status,
                _report_text(outcome.reason),
                outcome.document_id,
                outcome.chunks,
                seconds,
            ),
        )
        conn.commit()
        detail = (
            f"{outcome.chunks} chunks" + (f"; {outcome.reason}" if outcome.reason else "")
            if outcome.status == "added"
            else (outcome.reason or "")
        )
        echo(
            f"[{i}/{len(entries)}] {_report_text(ident) or f'line {line_no}'}: {outcome.status} "
            f"({_report_text(detail)}, {seconds:.1f}s)"
        )
    conn.execute(
        "UPDATE scirag.ingest_runs SET finished_at = now(), added = %s, duplicate = %s, failed = %s WHERE id = %s",
        (counts["added"], counts["duplicate"], counts["failed"], run_id),
    )
    conn.commit()
    echo(f"ingest run {run_id}: {counts['added']} added, {counts['duplicate']} duplicate, {counts['failed']} failed")
    return {"run_id": run_id, **counts}
