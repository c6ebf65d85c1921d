"""Maintenance commands: `scirag enrich`, `doctor`, `gc`, and the fixes doctor names
(`reembed`, `dedupe`, `retractions`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import psycopg
import typer

from scirag import db, routing
from scirag.cli_options import DsnOption
from scirag.crossref import CrossrefClient, RecordedSession
from scirag.upkeep.doctor import exit_code, render, replica_finding, run_doctor
from scirag.upkeep.enrich import citation_counts, enrich_documents, summary
from scirag.upkeep.gc import run_gc
from scirag.upkeep.maint import dedupe, exclude_retracted_by_default, reembed_stale, retracted_documents


def admin_connect(dsn: Optional[str]) -> psycopg.Connection:
    """The login itself when it may see every row (superuser or BYPASSRLS: doctor and gc
    must not be narrowed by scope), else the loader role, which sees every evidence row."""
    conn = db.connect(dsn or db.default_dsn())
    sees_all = conn.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()[0]
    if not sees_all:
        conn.close()
        conn = db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE)
    conn.commit()
    return conn


def enrich_cmd(
    dsn: Optional[str] = DsnOption,
    ids: Optional[list[str]] = typer.Option(None, "--id", help="only this document (external id; repeatable)"),
    missing: bool = typer.Option(False, "--missing", help="only documents never enriched"),
    limit: Optional[int] = typer.Option(None, help="at most this many documents"),
    notices: bool = typer.Option(
        True, "--notices/--no-notices", help="also ask which notices update a DOI (records without updated-by)"
    ),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="use the local response cache"),
    by_title: bool = typer.Option(
        False, "--by-title", help="documents without DOI: look them up by title, first author and year"
    ),
    replay: Optional[Path] = typer.Option(
        None,
        "--replay",
        exists=True,
        file_okay=False,
        help="answer from recorded responses (crossref_*.json) instead of the network",
    ),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object per document"),
):
    """Fetch Crossref metadata for documents with a DOI: journal, publisher, date, type,
    citation count, references (linked to corpus documents), licenses and retraction or
    correction notices. Each document is its own transaction; a retraction takes effect
    for the next answer without re-ingesting. Mailto, rate, cache: SCIRAG_CROSSREF_*."""
    session = RecordedSession.from_dir(replay) if replay else None
    client = CrossrefClient.from_env(session=session, **({"min_interval": 0.0, "cache_dir": None} if replay else {}))
    if not client.mailto and not replay:
        db.echo("note: set SCIRAG_CROSSREF_MAILTO to an address Crossref may contact (the polite pool)")
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        try:
            results = enrich_documents(
                conn,
                client,
                external_ids=ids or None,
                missing_only=missing,
                limit=limit,
                check_notices=notices,
                use_cache=cache,
                by_title=by_title,
                progress=None if as_json else db.echo,
            )
        except ValueError as exc:
            db.echo(str(exc))
            raise typer.Exit(2) from None
        cites = citation_counts(conn)
    s = summary(results)
    if as_json:
        for r in results:
            print(json.dumps(r.__dict__, default=str))
    db.echo(
        f"{len(results)} document(s): {s['enriched']} enriched, {s['unchanged']} unchanged, "
        f"{s['not_found']} not in Crossref, {s['error']} failed, {s['skipped']} skipped; "
        f"{s['retracted']} retracted; citations: {cites['resolved']} resolved, {cites['unresolved']} unresolved; "
        f"{client.requests_made} request(s)"
    )
    ok = s["enriched"] + s["unchanged"] + s["not_found"]
    raise typer.Exit(0 if ok > 0 or s["error"] == 0 else 1)


def doctor_cmd(
    dsn: Optional[str] = DsnOption, as_json: bool = typer.Option(False, "--json", help="machine-readable report")
):
    """Check the database for stale embeddings, empty or duplicate documents, retracted
    documents in the default scope, keyword statistics, index validity, graph garbage,
    tombstones, stale communities, role ceilings and settings. Each finding names its
    fix. Exit 1 when there is a problem."""
    with admin_connect(dsn) as conn:
        findings = run_doctor(conn)
    # replication: each standby's replay lag, and each read node of SCIRAG_READ_DSN
    replicas = routing.replica_status(dsn, with_hosts=True)
    findings.append(replica_finding(replicas))
    if as_json:
        out = {"ok": exit_code(findings) == 0, "findings": [f.to_json() for f in findings], "replicas": replicas}
        print(json.dumps(out, indent=1))
    else:
        print(render(findings))
    raise typer.Exit(exit_code(findings))


def gc_cmd(
    dsn: Optional[str] = DsnOption,
    apply: bool = typer.Option(False, "--apply", help="act (default: dry run, count only)"),
    empty_documents: bool = typer.Option(False, "--empty-documents", help="also delete documents without chunks"),
):
    """Remove graph and index garbage: mentions and edges on merged entities, edges
    without evidence, orphan entities, dangling citations, communities made stale by
    merges, postings of deleted chunks; rebuild wrong BM25 statistics. Tombstones and
    audit rows are kept."""
    with admin_connect(dsn) as conn:
        report = run_gc(conn, apply=apply, empty_documents=empty_documents)
    print(report.render())


def reembed_cmd(dsn: Optional[str] = DsnOption, batch: int = typer.Option(64, help="chunks per transaction")):
    """Re-embed chunks whose embedding_version is not the configured embedder's."""
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        try:
            n, version = reembed_stale(conn, batch=batch, progress=db.echo)
        except RuntimeError as exc:
            db.echo(str(exc))
            raise typer.Exit(2) from None
    print(f"re-embedded {n} chunk(s) with {version}")


def dedupe_cmd(
    dsn: Optional[str] = DsnOption, apply: bool = typer.Option(False, "--apply", help="delete (default: list only)")
):
    """Delete probable duplicate documents (same DOI or normalised title), keeping the
    first-ingested copy of each group."""
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        groups = dedupe(conn, apply=apply)
    for reason, keep, drop in groups:
        print(f"{reason}: keep {keep}, {'deleted' if apply else 'would delete'} {', '.join(drop)}")
    print(
        f"{sum(len(d) for _, _, d in groups)} duplicate(s) {'deleted' if apply else 'found (dry run; --apply to delete)'}"
    )


def retractions_cmd(
    dsn: Optional[str] = DsnOption,
    remove: bool = typer.Option(False, "--remove", help="delete retracted documents (with --apply)"),
    apply: bool = typer.Option(False, "--apply", help="act on --remove (default: list only)"),
    exclude_by_default: bool = typer.Option(
        False,
        "--exclude-by-default",
        help="ALTER DATABASE ... SET scirag.exclude_retracted = on (raw retrieval drops them too)",
    ),
):
    """List retracted documents; remove them, or exclude them from raw retrieval by default."""
    with admin_connect(dsn) as conn:
        docs = retracted_documents(conn)
        for _doc_id, ext, doi, notice in docs:
            print(f"{ext} doi:{doi} retracted{f' by {notice}' if notice else ''}")
        if remove and apply and docs:
            conn.execute("DELETE FROM scirag.documents WHERE retracted")
            conn.commit()
            print(f"deleted {len(docs)} retracted document(s)")
        elif remove:
            print(f"{len(docs)} retracted document(s) would be deleted (--apply to delete)")
        if exclude_by_default:
            exclude_retracted_by_default(conn)
            print(
                "raw retrieval now excludes retracted documents by default "
                "(a session may still SET scirag.exclude_retracted = off to inspect them)"
            )
