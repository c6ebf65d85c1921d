"""parse -> chunk -> classify license -> deduplicate -> embed -> store (one transaction).

With ``jobs > 1`` (``scirag ingest --jobs N``) worker processes parse, chunk and embed
each document (parse_chunk_embed, one embedding model per worker) ahead of the main
process, which deduplicates and stores in order; the main process then loads no model."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, replace
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from scirag.ingest.chunk import chunk_document, content_hash
from scirag.ingest.discover import fill_from_file
from scirag.db import echo
from scirag.ingest.manifest import Entry, ManifestError, read_manifest
from scirag.ingest.parse import ParseError
from scirag.ingest.parse_guard import GuardedParser, ParseBudget
from scirag_helpers.embedder import VERSION as EMBEDDING_VERSION, Embedder, EmbeddingError, to_pgvector

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


# the citation fields a later manifest line with the same content and id may correct
CORRECTABLE = ("title", "authors", "year", "doi", "journal", "arxiv_id")
STATUSES = ("added", "duplicate", "updated", "replaced", "skipped", "failed")


@dataclass
class Outcome:
    status: str  # one of STATUSES (schema/ingest_outcomes)
    reason: str | None = None
    document_id: int | None = None
    chunks: int = 0


_WORKER_PARSER: GuardedParser | None = None  # a --jobs worker process's own guarded parser
_WORKER_EMBEDDER: Embedder | None = None  # and its own embedding model


def parse_and_chunk(
    entry: Entry,
    target_tokens: int = 800,
    overlap_tokens: int = 150,
    parser: GuardedParser | None = None,
    budget: ParseBudget | None = None,
):
    """(parsed document, chunks, entry) of one entry: the CPU-bound part of ingestion, run
    in parse workers (`scirag ingest --jobs`) while the main process embeds and stores.
    Every parse goes through a GuardedParser (a time and memory budget per document):
    the caller's, or in a --jobs worker process one of its own with ``budget``.
    An entry whose citation fields are still to be read from its file
    (entry.infer_at_parse) gets them from this same parse: the entry returned is a
    copy with them filled in (the title heads the chunks, so before chunking)."""
    global _WORKER_PARSER
    if parser is None:
        if _WORKER_PARSER is None:
            _WORKER_PARSER = GuardedParser(budget)
        parser = _WORKER_PARSER
    if entry.path is not None:
        doc = parser.parse_file(entry.path, meta=entry.infer_at_parse)
    else:
        doc = parser.parse_text(entry.text, fmt=entry.fmt, name=entry.id)
    if entry.infer_at_parse:
        entry = fill_from_file(replace(entry, inferred=list(entry.inferred)), found=doc.meta or {})
    return doc, chunk_document(doc, entry.title, target_tokens, overlap_tokens), entry


def embed_leaves(embedder, chunks) -> dict:
    """{ordinal: vector} for the chunks that are embedded (all but section parents)."""
    leaves = [c for c in chunks if c.kind != "section"]
    return dict(zip((c.ordinal for c in leaves), embedder.embed([c.content for c in leaves])))


def parse_chunk_embed(entry: Entry, target_tokens: int, overlap_tokens: int, budget: ParseBudget, dim: int | None):
    """(document, chunks, entry, vectors) of one entry, made in a --jobs worker process:
    parse_and_chunk, then the leaves embedded by the worker's own model (one thread:
    the workers share the cores) for a column of dim dimensions. The main process
    stores the vectors as they come, so it never loads the model. vectors is None for
    dim None (the main process embeds) and for a document without usable text (the
    main process fails it)."""
    global _WORKER_EMBEDDER
    doc, chunks, entry = parse_and_chunk(entry, target_tokens, overlap_tokens, None, budget)
    if dim is None or not any(c.kind != "section" for c in chunks):
        return doc, chunks, entry, None
    if _WORKER_EMBEDDER is None:
        _WORKER_EMBEDDER = Embedder(threads=1, expected_dim=dim)
    return doc, chunks, entry, embed_leaves(_WORKER_EMBEDDER, chunks)


class Ingester:
    def __init__(
        self,
        conn: psycopg.Connection,
        embedder: Embedder | None = None,
        target_tokens: int = 800,
        overlap_tokens: int = 150,
        budget: ParseBudget | None = None,
        parser: GuardedParser | None = None,
        replace: bool = False,
    ):
        """replace: a line whose id is stored with other content replaces that document's
        content in place (same document id), instead of failing. embedder: the model to
        embed with; by default scirag's own, loaded when first needed (with --jobs
        workers, which embed with the same model, never in this process)."""
        self.conn = conn
        self._embedder = embedder
        self.embedding_version = embedder.version if embedder is not None else EMBEDDING_VERSION
        self.target_tokens, self.overlap_tokens = target_tokens, overlap_tokens
        # every document is parsed in a worker process within a time and memory budget
        self.parser = parser or GuardedParser(budget)
        self.replace = replace

    def close(self) -> None:
        """Ends the parse worker (it also ends by itself when this process exits)."""
        self.parser.close()

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(threads=2, expected_dim=self.column_dim())
        return self._embedder

    @property
    def workers_embed(self) -> bool:
        """--jobs workers embed only with scirag's own model (a caller's embedder stays here)."""
        return self.embedding_version == EMBEDDING_VERSION and (
            self._embedder is None or type(self._embedder) is Embedder
        )

    def column_dim(self) -> int:
        """The dimension of the database's embedding column (what the model must return)."""
        return int(self.conn.execute("SELECT value FROM scirag.settings WHERE key = 'embedding_dim'").fetchone()[0])

    def ingest_entry(self, entry: Entry, run_id: int, base: Path | None = None, parsed=None) -> Outcome:
        """parsed: (document, chunks, entry, vectors or None) already made by a worker
        (parse_chunk_embed, or parse_and_chunk with no vectors)."""
        doc, chunks, entry, vectors = parsed or (
            *parse_and_chunk(entry, self.target_tokens, self.overlap_tokens, self.parser),
            None,
        )
        if not any(c.kind != "section" for c in chunks):
            return Outcome("failed", "no usable text after parsing and chunking")
        digest = content_hash(chunks)
        dup = self.conn.execute(
            "SELECT id, external_id, license::text FROM scirag.documents WHERE content_hash = %s", (digest,)
        ).fetchone()
        self.conn.commit()
        if dup and dup[1] == entry.id:
            return self._same(entry, *dup)
        if dup:
            return self._duplicate(entry, *dup)
        taken = self.conn.execute("SELECT id FROM scirag.documents WHERE external_id = %s", (entry.id,)).fetchone()
        self.conn.commit()
        if taken and not self.replace:
            return Outcome(
                "failed",
                f"id '{entry.id}' is already used by a document with different content "
                "(a new version? pass --replace to replace it, keeping its document id)",
            )
        if vectors is None:
            vectors = embed_leaves(self.embedder, chunks)
        if taken:
            return self._replace(taken[0], entry, doc, chunks, vectors, digest, run_id, base)
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

    def _same(self, entry: Entry, doc_id: int, external_id: str, stored: str) -> Outcome:
        """The same content under the same id: the line's stated citation fields that
        differ from the stored ones correct them (scirag.document_set, which also stops
        marking them inferred); otherwise it is a duplicate as any other."""
        row = self.conn.execute(
            "SELECT title, authors, year, doi, journal, arxiv_id FROM scirag.documents WHERE id = %s", (doc_id,)
        ).fetchone()
        current = dict(zip(CORRECTABLE, row))
        changes = {f: getattr(entry, f) for f in CORRECTABLE if f in entry.stated and getattr(entry, f) != current[f]}
        if not changes:
            self.conn.commit()
            return self._duplicate(entry, doc_id, external_id, stored)
        with self.conn.transaction():
            self.conn.execute("SELECT scirag.document_set(%s, %s)", (external_id, Jsonb(changes)))
        outcome = self._duplicate(entry, doc_id, external_id, stored)  # a stated license, as for any duplicate
        extra = outcome.reason.split("; ", 1)[1] if "; " in (outcome.reason or "") else None
        return Outcome("updated", "metadata corrected: " + ", ".join(changes) + (f"; {extra}" if extra else ""), doc_id)

    def _replace(self, doc_id: int, entry: Entry, doc, chunks, vectors, digest: str, run_id: int, base) -> Outcome:
        """New content for a stored document, keeping its id (and so everything keyed on
        it outside the evidence: eval questions, presets, citations of it): its old
        chunks and all that was derived from them go (scirag.document_clear) and the new
        ones are stored, in one transaction. The line's metadata replaces the stored
        metadata; its license only when the line states one."""
        with self.conn.transaction():
            old = self.conn.execute("SELECT scirag.document_clear(%s)", (doc_id,)).fetchone()[0]
            license_, source = self.conn.execute(
                """UPDATE scirag.documents SET title = %s, authors = %s, year = %s, journal = %s, doi = %s,
                       arxiv_id = %s, content_hash = %s, source_path = coalesce(%s, source_path),
                       parser = %s, pages = %s,
                       ingest_run_id = %s, metadata_inferred = %s,
                       license = CASE WHEN %s THEN %s::scirag.license_class ELSE license END,
                       source = CASE WHEN %s THEN %s ELSE source END
                   WHERE id = %s RETURNING license::text, source""",
                (
                    entry.title,
                    entry.authors,
                    entry.year,
                    entry.journal,
                    entry.doi,
                    entry.arxiv_id,
                    digest,
                    # a re-parse (no folder to show it relative to) keeps the stored one
                    shown_path(entry.path, entry.base or base) if (entry.base or base) else None,
                    doc.parser,
                    doc.pages,
                    run_id,
                    entry.inferred,
                    "license" in entry.stated,
                    entry.license,
                    "source" in entry.stated,
                    entry.source,
                    doc_id,
                ),
            ).fetchone()
            stored = replace(entry, license=license_, source=source)
            self._insert_chunks(doc_id, stored, chunks, vectors)
        return Outcome(
            "replaced", f"document {doc_id} kept its id; {old['chunks']} old chunk(s) removed", doc_id, len(chunks)
        )

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
                    self.embedding_version if vec is not None else None,
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


def file_signature(path: Path | None) -> tuple[int, float, str] | None:
    """(size, mtime, SHA-256) of a file, or None for manifest text or an unreadable file."""
    if path is None:
        return None
    try:
        st = Path(path).stat()
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return st.st_size, st.st_mtime, digest.hexdigest()


def unchanged_since_stored(conn: psycopg.Connection, entry: Entry, path: str, sig: tuple) -> int | None:
    """The id of the document a past run stored from this very file (same path, id,
    size, mtime and SHA-256), when the document is still there and the line states
    nothing that differs from it (a corrected title must not be skipped); else None."""
    row = conn.execute(
        """SELECT d.id, d.title, d.authors, d.year, d.doi, d.journal, d.arxiv_id, d.license::text, d.source
           FROM scirag.ingest_reports r JOIN scirag.documents d ON d.id = r.document_id
           WHERE r.path = %s AND r.external_id = %s AND r.file_size = %s AND r.file_mtime = %s
             AND r.file_sha256 = %s AND r.status <> 'failed' AND d.external_id = %s
           ORDER BY r.id DESC LIMIT 1""",
        (path, entry.id, sig[0], sig[1], sig[2], entry.id),
    ).fetchone()
    conn.commit()
    if row is None:
        return None
    stored = dict(zip((*CORRECTABLE, "license", "source"), row[1:]))
    if any(getattr(entry, f) != stored[f] for f in stored if f in entry.stated):
        return None
    return row[0]


def ingest_entries(
    conn: psycopg.Connection,
    entries: list,
    label: str,
    ingester: Ingester | None = None,
    base: Path | None = None,
    skip_unchanged: bool = False,
    jobs: int = 1,
) -> dict:
    """Ingests (line_no, Entry | ManifestError) items as one run named label (a manifest
    path, or the paths given to `scirag ingest`); base: the folder source paths are
    shown relative to, for entries that carry no base of their own. skip_unchanged: a
    file stored before and unchanged since (size, mtime, SHA-256) is not parsed again.
    jobs > 1: documents are parsed, chunked and embedded by that many worker processes,
    ahead of the main process, which stores them in order (one report row each)."""
    ingester = ingester or Ingester(conn)
    run_id = conn.execute(
        "INSERT INTO scirag.ingest_runs (manifest, embedding_version) VALUES (%s, %s) RETURNING id",
        (_report_text(label), ingester.embedding_version),
    ).fetchone()[0]
    conn.commit()
    counts = {status: 0 for status in STATUSES}
    # skipping is decided first (it reads the database), so no worker parses a skipped file
    plan = []
    for line_no, entry in entries:
        path = str(Path(entry.path).resolve()) if isinstance(entry, Entry) and entry.path else None
        sig = file_signature(entry.path) if isinstance(entry, Entry) else None
        same = None
        if skip_unchanged and sig and isinstance(entry, Entry):
            same = unchanged_since_stored(conn, entry, path, sig)
        plan.append((line_no, entry, path, sig, same))
    pool, futures, dim = None, {}, None
    if jobs > 1:
        import concurrent.futures
        import multiprocessing

        pool = concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))
        dim = ingester.column_dim() if ingester.workers_embed else None  # None: this process embeds
    run_started = time.monotonic()

    def submit_ahead(k: int) -> None:
        # a bounded window of documents parsed ahead: memory stays that of a few documents
        for j in range(k, min(len(plan), k + 2 * jobs)):
            entry, same = plan[j][1], plan[j][4]
            # a file whose metadata read used up its budget fails at once in the main
            # process (ingest_entry), never costs a second budget in a worker
            over = isinstance(entry, Entry) and str(entry.path) in ingester.parser.exceeded
            if pool is not None and j not in futures and isinstance(entry, Entry) and same is None and not over:
                futures[j] = pool.submit(
                    parse_chunk_embed,
                    entry,
                    ingester.target_tokens,
                    ingester.overlap_tokens,
                    ingester.parser.budget,
                    dim,
                )

    try:
        _ingest_plan(conn, plan, futures, submit_ahead, ingester, run_id, base, counts, run_started)
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    conn.execute(
        """UPDATE scirag.ingest_runs SET finished_at = now(), added = %s, duplicate = %s, failed = %s,
               updated = %s, replaced = %s, skipped = %s WHERE id = %s""",
        (
            counts["added"],
            counts["duplicate"],
            counts["failed"],
            counts["updated"],
            counts["replaced"],
            counts["skipped"],
            run_id,
        ),
    )
    conn.commit()
    more = ", ".join(f"{counts[s]} {s}" for s in ("updated", "replaced", "skipped") if counts[s])
    total = time.monotonic() - run_started
    echo(
        f"ingest run {run_id}: {counts['added']} added, {counts['duplicate']} duplicate, {counts['failed']} failed"
        + (f"; {more}" if more else "")
        + f" ({total:.1f}s)"
    )
    return {"run_id": run_id, **counts}


def _eta(done: int, total: int, elapsed: float) -> str:
    """'0.42 docs/s, ETA 0:12' after `done` of `total` documents in `elapsed` seconds."""
    if done <= 0 or elapsed <= 0:
        return ""
    rate = done / elapsed
    left = int(round((total - done) / rate))
    return f"{rate:.2f} docs/s, ETA {left // 60}:{left % 60:02d}"


def _ingest_plan(conn, plan, futures, submit_ahead, ingester, run_id, base, counts, run_started) -> None:
    for i, (line_no, entry, path, sig, same) in enumerate(plan, 1):
        submit_ahead(i - 1)
        started = time.monotonic()
        ident = getattr(entry, "id", None)
        if isinstance(entry, ManifestError):
            outcome = Outcome("failed", str(entry))
        elif same is not None:
            outcome = Outcome("skipped", "unchanged since it was stored (size, mtime, SHA-256)", same)
        else:
            try:
                parsed = futures.pop(i - 1).result() if (i - 1) in futures else None
                outcome = ingester.ingest_entry(entry, run_id, base, parsed)
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
                   document_id, chunks, seconds, file_size, file_mtime, file_sha256)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
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
                *(sig if sig and outcome.status != "failed" else (None, None, None)),
            ),
        )
        conn.commit()
        detail = (
            f"{outcome.chunks} chunks" + (f"; {outcome.reason}" if outcome.reason else "")
            if outcome.status in ("added", "replaced")
            else (outcome.reason or "")
        )
        eta = _eta(i, len(plan), time.monotonic() - run_started)
        echo(
            f"[{i}/{len(plan)}] {_report_text(ident) or f'line {line_no}'}: {outcome.status} "
            f"({_report_text(detail)}, {seconds:.1f}s)" + (f"  [{eta}]" if eta and len(plan) > 1 else "")
        )
