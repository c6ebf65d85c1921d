"""`scirag graph ...`: build, resolve and summarise the knowledge graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from scirag import db, routing
from scirag.cli_options import DsnOption

DomainOption = typer.Option(None, "--domain", help="domain file (default: SCIRAG_DOMAIN or domain/domain.yaml)")


def _domain(path: Optional[Path]):
    from scirag.graph.ontology import OntologyError, load_domain

    try:
        return load_domain(path)
    except OntologyError as exc:
        db.echo(str(exc))
        raise typer.Exit(2) from None


def _llm(provider: str, offline_name: str):
    """The model client for provider auto|model, or None for the offline default."""
    from scirag_helpers.llm import LLMError, get_llm

    if provider == offline_name:
        return None
    try:
        client = get_llm()
    except LLMError as exc:
        db.echo(f"model provider: {exc}")
        raise typer.Exit(2) from None
    if client is None and provider == "model":
        db.echo("--provider model needs SCIRAG_LLM_PROVIDER (google, openai or recorded)")
        raise typer.Exit(2)
    return client


def extract(
    dsn: Optional[str] = DsnOption,
    domain: Optional[Path] = DomainOption,
    provider: str = typer.Option(
        "auto", help="auto (a model when SCIRAG_LLM_PROVIDER is set, else offline), offline, model"
    ),
    all_chunks: bool = typer.Option(False, "--all", help="re-read every chunk, merging into the stored graph"),
    limit: Optional[int] = typer.Option(None, help="at most this many chunks"),
    batch: int = typer.Option(25, help="chunks per transaction"),
):
    """Extract entities, relationships and citations from chunks not yet read
    (graph_extracted_at IS NULL), validated against the domain ontology."""
    from scirag.graph.extract import ModelExtractor, run_extract
    from scirag.graph.offline import OfflineExtractor

    if provider not in ("auto", "offline", "model"):
        raise typer.BadParameter("provider is auto, offline or model")
    dom = _domain(domain)
    client = _llm(provider, "offline")
    extractor = ModelExtractor(dom, client) if client is not None else OfflineExtractor(dom)
    db.echo(
        f"extracting with {extractor.name} ({len(dom.entity_types)} entity types, "
        f"{len(dom.relation_types)} relation types, {len(dom.entities)} declared entities)"
    )
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        stats = run_extract(conn, dom, extractor, all_chunks=all_chunks, limit=limit, batch=batch, progress=db.echo)
    print(stats.summary())


def resolve_entities(
    dsn: Optional[str] = DsnOption,
    domain: Optional[Path] = DomainOption,
    dry_run: bool = typer.Option(False, "--dry-run", help="show the merges; write nothing"),
    apply: bool = typer.Option(False, "--apply", help="apply the merges (audited)"),
    no_llm: bool = typer.Option(False, "--no-llm", help="deterministic tiers only"),
    as_json: bool = typer.Option(False, "--json", help="print the plan as JSON"),
):
    """Conservative three-tier entity resolution: normalised name / alias overlap,
    high-similarity same-type names, one batched model decision for the ambiguous band."""
    from scirag.graph.resolve import apply_plan, plan_resolution

    if dry_run == apply:
        raise typer.BadParameter("give exactly one of --dry-run or --apply")
    dom = _domain(domain)
    client = None if no_llm else _llm("auto", "offline")
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        if dry_run:
            conn.read_only = True  # the server refuses any write: a dry run cannot change a table
        plan = plan_resolution(conn, dom, client)
        if apply:
            result = apply_plan(conn, plan)
    if as_json:
        print(json.dumps(plan.as_dict(), indent=2))
    else:
        print(plan.report())
    if apply:
        print(
            f"applied {result['merged']} merges (run {result['run_id']}); "
            f"{result['communities_cleared']} community summaries cleared"
            + ("; rebuild them with: scirag graph communities" if result["communities_cleared"] else "")
        )
    else:
        print("dry run: nothing was written")


def communities(
    dsn: Optional[str] = DsnOption,
    domain: Optional[Path] = DomainOption,
    provider: str = typer.Option(
        "auto", help="auto (a model when SCIRAG_LLM_PROVIDER is set, else extractive), extractive, model"
    ),
):
    """Detect communities (deterministic label propagation) per license tier,
    summarise each (model or extractive) and embed the summaries."""
    from scirag.graph.communities import build_communities

    if provider not in ("auto", "extractive", "model"):
        raise typer.BadParameter("provider is auto, extractive or model")
    dom = _domain(domain)
    client = _llm(provider, "extractive")
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        stats = build_communities(conn, dom, client, progress=db.echo)
    print(stats.summary())


def search(
    question: str = typer.Argument(...),
    n: int = typer.Option(10, "-n", help="chunks to show"),
    dsn: Optional[str] = DsnOption,
):
    """Show what the graph layer alone finds for a question (scirag.search_graph, as the reader role)."""
    with routing.connect_reader(dsn, role=db.READER_ROLE) as conn:
        # readers reach entities and chunks through the reader API (policies/reader_wall)
        seeds = conn.execute(
            """SELECT s.matched, e.name, e.entity_type FROM scirag.graph_seed_entities(%s) s
               LEFT JOIN scirag.entities_visible(ARRAY[s.entity_id]) e ON true""",
            (question,),
        ).fetchall()
        rows = conn.execute(
            """SELECT g.rank, g.hops, g.confidence, c.external_id, c.section_path, c.content
               FROM scirag.search_graph(%s, %s) g, scirag.chunk_get(g.chunk_id) c ORDER BY g.rank""",
            (question, n),
        ).fetchall()
    print(f"Q: {question}")
    print("seeds: " + (", ".join(f"{m!r} -> {nm or '?'} ({t or '?'})" for m, nm, t in seeds) or "(none in your scope)"))
    for rank, hops, conf, ext, path, content in rows:
        body = content.split("\n\n", 1)[-1].replace("\n", " ")
        print(f"[{rank}] hops {hops} conf {conf:.1f}  {ext} > {path.split(' > ', 1)[-1]}")
        print(f"    {body[:200]}{'...' if len(body) > 200 else ''}")
