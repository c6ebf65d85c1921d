"""`scirag ingest`: discover, parse, chunk, embed and store documents."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from scirag import db, routing
from scirag.cli_options import DsnOption
from scirag.discover import DiscoverError, discover, write_manifest
from scirag.hints import unknown_license_warning


def ingest(
    paths: List[Path] = typer.Argument(..., help="manifests (.jsonl), documents (.pdf .md .html .txt) or folders"),
    license: Optional[str] = typer.Option(
        None,
        "--license",
        help="license of files no manifest line names: public, open_commercial, "
        "open_noncommercial, restricted or unknown (default unknown: readers never see it)",
    ),
    source: Optional[str] = typer.Option(None, "--source", help="source of files no manifest line names"),
    glob: Optional[List[str]] = typer.Option(
        None, "--glob", help="in folders, only files whose name or relative path matches (repeatable), e.g. '*.pdf'"
    ),
    manifest_out: Optional[Path] = typer.Option(
        None, "--manifest-out", help="write the manifest this run inferred (to review it and repeat the run)"
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="only discover (and write --manifest-out); store nothing"),
    dsn: Optional[str] = DsnOption,
    target_tokens: int = typer.Option(800, help="prose chunk target size in tokens"),
    overlap_tokens: int = typer.Option(150, help="overlap carried into the next prose chunk"),
    allow_outside: bool = typer.Option(
        False, "--allow-outside", help="let manifest paths (and links in folders) point outside their folder"
    ),
    parse_seconds: Optional[float] = typer.Option(
        None, "--parse-seconds", help="wall-clock budget to parse one document (default SCIRAG_PARSE_SECONDS or 300)"
    ),
    parse_memory_mb: Optional[int] = typer.Option(
        None, "--parse-memory-mb", help="memory budget of the parse worker (default SCIRAG_PARSE_MEMORY_MB or 2048)"
    ),
):
    """Parse, chunk, embed and store documents: the lines of manifests, and files and folders
    (recursively). A manifest line states its document's rights; --license/--source apply to the
    files no manifest line names. Title, authors, year, DOI and arXiv id a manifest leaves out are
    read from the file and marked as inferred."""
    from scirag.ingest import Ingester, ingest_entries
    from scirag.parse_guard import GuardedParser, ParseBudget

    try:
        budget = ParseBudget.from_env(parse_seconds, parse_memory_mb)
    except ValueError as exc:
        db.echo(f"error: {exc}")
        raise typer.Exit(2) from None
    # one parse worker for the whole run: discovery reads metadata through it too
    parser = GuardedParser(budget)
    try:
        found = discover(paths, glob, license, source, allow_outside, reader=parser)
    except DiscoverError as exc:
        db.echo(f"error: {exc}")
        raise typer.Exit(2) from None
    if found.skipped:
        db.echo(f"{len(found.skipped)} file(s) in the folders did not match --glob")
    if manifest_out:
        outside = write_manifest(found, manifest_out)
        db.echo(
            f"wrote {manifest_out} ({len(found.items)} line(s))"
            + (f"; {len(outside)} path(s) lie outside its folder: repeat with --allow-outside" if outside else "")
        )
    if dry_run:
        for line_no, item in found.items:
            print(f"{line_no}: {getattr(item, 'id', None)}: {item if not hasattr(item, 'path') else item.path}")
        return
    label = " ".join(str(p) for p in paths)
    with routing.connect_writer(dsn, role=db.LOADER_ROLE) as conn:  # a standby is refused in one line
        ingester = Ingester(conn, target_tokens=target_tokens, overlap_tokens=overlap_tokens, parser=parser)
        try:
            counts = ingest_entries(conn, found.items, label, ingester)
        finally:
            ingester.close()
        if counts["added"] + counts["duplicate"]:
            # fresh BM25 postings (new chunks, or chunks re-filed under a new license) into
            # blocks, and planner statistics for what the run wrote
            db.finish_load(conn)
        # added or found again by this run (a duplicate of an 'unknown' document is just as invisible)
        unknown = conn.execute(
            """SELECT count(DISTINCT d.id) FROM scirag.ingest_reports r JOIN scirag.documents d ON d.id = r.document_id
               WHERE r.run_id = %s AND d.license = 'unknown'""",
            (counts["run_id"],),
        ).fetchone()[0]
    warning = unknown_license_warning(unknown)
    if warning:
        db.echo(warning)
    raise typer.Exit(0 if counts["added"] + counts["duplicate"] > 0 or counts["failed"] == 0 else 1)
