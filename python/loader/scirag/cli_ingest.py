"""`scirag ingest`: discover, parse, chunk, embed and store documents."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from scirag import db, routing
from scirag.cli_options import DsnOption
from scirag.ingest.discover import DiscoverError, discover, skipped_summary, write_manifest
from scirag.hints import unknown_license_warning


def worker_count(jobs: int, items: int) -> int:
    """Parse workers for a run: `--jobs` as given, 0 meaning one per CPU core, never more
    than the run has documents (and at least one process)."""
    return max(1, min(jobs or os.cpu_count() or 1, items))


def ingest(
    paths: List[Path] = typer.Argument(..., help="manifests (.jsonl), documents (.pdf .md .html .txt) or folders"),
    license: Optional[str] = typer.Option(
        None,
        "--license",
        help="license of files no manifest line names: public, open_commercial, "
        "open_noncommercial, restricted or unknown, in any case, or a common name (CC0, CC-BY, CC-BY-SA, "
        "CC-BY-NC, CC-BY-NC-SA); default unknown: readers never see it",
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
    jobs: int = typer.Option(
        0, "--jobs", "-j", min=0, max=64, help="parse workers (processes); 0 = one per CPU core, 1 = no workers"
    ),
    skip_unchanged: bool = typer.Option(
        True,
        "--skip-unchanged/--reparse-all",
        help="skip files stored before and unchanged since (same path, size, mtime, SHA-256)",
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="a line whose id is stored with other content (a new version) replaces it, keeping its document id",
    ),
):
    """Parse, chunk, embed and store documents: the lines of manifests, and files and folders
    (recursively). A manifest line states its document's rights; --license/--source apply to the
    files no manifest line names. Title, authors, year, DOI and arXiv id a manifest leaves out are
    read from the file and marked as inferred. A line with the same content and id as a stored
    document corrects its stated metadata. Exit status: 0 when no line failed, 1 when any line
    failed (the others are stored all the same), 2 for a usage error."""
    from scirag.ingest.pipeline import Ingester, ingest_entries
    from scirag.ingest.parse_guard import GuardedParser, ParseBudget

    from scirag.ingest.licenses import normalise_license

    try:
        budget = ParseBudget.from_env(parse_seconds, parse_memory_mb)
        if license is not None:
            license, hint = normalise_license(license, "--license")
            if hint:
                db.echo(hint)
    except ValueError as exc:
        db.echo(f"error: {exc}")
        raise typer.Exit(2) from None
    # one guarded parse worker for discovery and for the runs without --jobs workers
    parser = GuardedParser(budget)
    try:
        # a file's citation fields come from its one parse at ingest; --dry-run and
        # --manifest-out show them before any parse, so they read them now
        at_parse = not (dry_run or manifest_out)
        found = discover(paths, glob, license, source, allow_outside, reader=parser, infer_at_parse=at_parse)
    except (DiscoverError, ValueError) as exc:
        db.echo(f"error: {exc}")
        raise typer.Exit(2) from None
    for line in skipped_summary(found.skipped):
        db.echo(line)
    if manifest_out:
        outside = write_manifest(found, manifest_out)
        failed = [(n, item) for n, item in found.items if not hasattr(item, "path")]
        for n, item in failed:
            db.echo(f"left out of {manifest_out}: line {n} failed: {item}")
        db.echo(
            f"wrote {manifest_out} ({len(found.items) - len(failed)} line(s))"
            + (f"; {len(outside)} path(s) lie outside its folder: repeat with --allow-outside" if outside else "")
        )
    if dry_run:
        for line_no, item in found.items:
            print(f"{line_no}: {getattr(item, 'id', None)}: {item if not hasattr(item, 'path') else item.path}")
        return
    label = " ".join(str(p) for p in paths)
    with routing.connect_writer(dsn, role=db.LOADER_ROLE) as conn:  # a standby is refused in one line
        ingester = Ingester(
            conn, target_tokens=target_tokens, overlap_tokens=overlap_tokens, parser=parser, replace=replace
        )
        try:
            counts = ingest_entries(
                conn,
                found.items,
                label,
                ingester,
                skip_unchanged=skip_unchanged,
                jobs=worker_count(jobs, len(found.items)),
            )
        finally:
            ingester.close()
        if counts["added"] + counts["duplicate"] + counts["replaced"] + counts["updated"]:
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
    # the rule (docs/library.md): any failed line makes the exit status 1
    if counts["failed"]:
        db.echo(f"{counts['failed']} line(s) failed: see the lines marked 'failed' above")
    raise typer.Exit(1 if counts["failed"] else 0)
