"""`scirag docs list|show|rm|reparse|set`: the documents of the library (issue 25).

Every command runs as the loader role, which sees every document whatever its
license; the writes are SQL functions (functions/document_admin), one transaction each.
"""

from __future__ import annotations

import json
from typing import List, Optional

import psycopg
import typer

from scirag import db
from scirag.cli_options import DsnOption
from scirag.library import (
    LibraryError,
    delete_documents,
    list_documents,
    reparse_entry,
    set_metadata,
    show_document,
)

RefArgument = typer.Argument(..., help="manifest id or numeric document id (scirag docs list shows both)")


def _fail(exc: Exception) -> None:
    from scirag.errors import error_line

    db.echo(error_line(exc) or f"error: {str(exc).strip().splitlines()[0]}")
    raise typer.Exit(1)


def _json(obj) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def docs_list(
    dsn: Optional[str] = DsnOption,
    license: Optional[str] = typer.Option(None, "--license", help="only this license class"),
    source: Optional[str] = typer.Option(None, "--source", help="only this source"),
    limit: int = typer.Option(1000, "--limit", min=1, max=10_000, help="at most this many rows (1-10000)"),
    offset: int = typer.Option(0, "--offset", min=0, help="skip this many rows first"),
    as_json: bool = typer.Option(False, "--json", help="print JSON rows"),
):
    """List the documents: id, manifest id, year, license, source, chunks and title,
    then the number of documents per license and per source."""
    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            rows = list_documents(conn, license, source, limit, offset)
    except (psycopg.Error, LibraryError) as exc:
        _fail(exc)
    if as_json:
        _json(rows)
        return
    if not rows:
        print(
            "no documents" + (" matching the filter" if license or source else ": scirag ingest FOLDER --license ...")
        )
        return
    width = min(max(len(r["external_id"]) for r in rows), 40)
    print(f"{'id':>6}  {'manifest id':<{width}}  {'year':>4}  {'license':<18}  {'source':<16}  {'chunks':>6}  title")
    for r in rows:
        print(
            f"{r['document_id']:>6}  {r['external_id'][:width]:<{width}}  {r['year'] or '':>4}  {r['license']:<18}  "
            f"{r['source'][:16]:<16}  {r['chunks']:>6}  {r['title']}" + ("  [RETRACTED]" if r["retracted"] else "")
        )
    for key in ("license", "source"):
        counts: dict = {}
        for r in rows:
            counts[r[key]] = counts.get(r[key], 0) + 1
        print(f"{len(rows)} document(s) by {key}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))


def docs_show(ref: str = RefArgument, dsn: Optional[str] = DsnOption, as_json: bool = typer.Option(False, "--json")):
    """A document's metadata (and which fields were guessed from the file), the file it
    was stored from, and its rows in every layer."""
    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            row = show_document(conn, ref)
    except (psycopg.Error, LibraryError) as exc:
        _fail(exc)
    if as_json:
        _json(row)
        return
    inferred = set(row.pop("metadata_inferred") or [])
    layers = row.pop("layers")
    for key, value in row.items():
        if isinstance(value, list):
            value = "; ".join(value)
        print(f"{key:<14} {'' if value is None else value}" + ("   (read from the file)" if key in inferred else ""))
    print("layers         " + ", ".join(f"{n} {k}" for k, n in layers.items()))


def docs_rm(
    refs: List[str] = typer.Argument(..., help="manifest ids or numeric document ids"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
    dsn: Optional[str] = DsnOption,
):
    """Delete documents and everything derived from them (chunks, keyword postings,
    graph evidence, communities built from them, entities only they mentioned, their
    citations), all in one transaction: an unknown id deletes nothing."""
    if not yes:
        if not typer.get_text_stream("stdin").isatty():
            db.echo("error: deleting needs confirmation: pass --yes")
            raise typer.Exit(2)
        typer.confirm(f"delete {len(refs)} document(s) and everything derived from them?", abort=True)
    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            results = delete_documents(conn, refs)
    except (psycopg.Error, LibraryError) as exc:
        _fail(exc)
    for r in results:
        gone = ", ".join(f"{n} {k}" for k, n in r["deleted"].items() if n)
        print(f"deleted {r['external_id']} (id {r['document_id']}): {gone or 'no derived rows'}")


def docs_reparse(
    refs: List[str] = typer.Argument(..., help="manifest ids or numeric document ids"),
    dsn: Optional[str] = DsnOption,
    target_tokens: int = typer.Option(800, help="prose chunk target size in tokens"),
    overlap_tokens: int = typer.Option(150, help="overlap carried into the next prose chunk"),
):
    """Parse documents again from the files they were stored from (after a parser
    upgrade), keeping their ids and metadata: old chunks and what was derived from them
    go, new ones come, per document in one transaction. The graph is re-extracted by
    the next `scirag graph extract`."""
    from scirag.ingest.pipeline import Ingester, ingest_entries

    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            entries = [(i, reparse_entry(conn, ref)) for i, ref in enumerate(refs, 1)]
            ingester = Ingester(conn, target_tokens=target_tokens, overlap_tokens=overlap_tokens, replace=True)
            counts = ingest_entries(conn, entries, "reparse " + " ".join(refs), ingester)
            if counts["replaced"]:
                db.finish_load(conn)
    except (psycopg.Error, LibraryError) as exc:
        _fail(exc)
    raise typer.Exit(1 if counts["failed"] else 0)


def docs_set(
    ref: str = RefArgument,
    title: Optional[str] = typer.Option(None, "--title"),
    authors: Optional[str] = typer.Option(None, "--authors", help="'; '-separated, e.g. 'Ada Lovelace; Alan Turing'"),
    year: Optional[int] = typer.Option(None, "--year"),
    doi: Optional[str] = typer.Option(None, "--doi"),
    journal: Optional[str] = typer.Option(None, "--journal"),
    arxiv_id: Optional[str] = typer.Option(None, "--arxiv-id"),
    license: Optional[str] = typer.Option(None, "--license", help="public, open_commercial, ... (re-files chunks)"),
    source: Optional[str] = typer.Option(None, "--source"),
    dsn: Optional[str] = DsnOption,
):
    """Correct a document's metadata; a field set here is stated, no longer marked as
    read from the file. A new license or source re-files its chunks and graph evidence."""
    changes: dict = {
        k: v
        for k, v in (
            ("title", title),
            ("year", year),
            ("doi", doi),
            ("journal", journal),
            ("arxiv_id", arxiv_id),
            ("license", license),
            ("source", source),
        )
        if v is not None
    }
    if authors is not None:
        changes["authors"] = [a.strip() for a in authors.split(";") if a.strip()]
    if license is not None:
        from scirag.ingest.licenses import normalise_license

        try:
            changes["license"], hint = normalise_license(license, "--license")
        except ValueError as exc:
            _fail(exc)
        if hint:
            db.echo(hint)
    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            row = set_metadata(conn, ref, changes)
    except (psycopg.Error, LibraryError) as exc:
        _fail(exc)
    print(f"updated {row['external_id']} (id {row['document_id']}): {', '.join(changes)}")
