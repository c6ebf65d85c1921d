"""The scirag command line: set up a database, load documents, ask it questions."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from scirag import db
from scirag.cli_options import DsnOption

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="scirag: retrieval-augmented QA over scientific documents, inside PostgreSQL.")
db_app = typer.Typer(no_args_is_help=True, help="Create and deploy scirag databases.")
eval_app = typer.Typer(no_args_is_help=True, help="Evaluation harness.")
app.add_typer(db_app, name="db")
app.add_typer(eval_app, name="eval")



@db_app.command("init")
def db_init(dsn: Optional[str] = DsnOption,
            dim: int = typer.Option(db.EMBED_DIM, help="embedding dimension (fixed per database)"),
            fresh: bool = typer.Option(False, "--fresh", help="drop the database first (tests)")):
    """Create the database if needed and deploy the schema with Sqitch."""
    target = dsn or db.default_dsn()
    if fresh:
        db.drop_db(target)
    db.init_db(target, dim)
    db.echo("database ready")


@app.command()
def ingest(paths: List[Path] = typer.Argument(..., help="manifests (.jsonl), documents (.pdf .md .html .txt) or folders"),
           license: Optional[str] = typer.Option(
               None, "--license", help="license of files no manifest line names: public, open_commercial, "
                                       "open_noncommercial, restricted or unknown (default unknown: readers never see it)"),
           source: Optional[str] = typer.Option(None, "--source", help="source of files no manifest line names"),
           glob: Optional[List[str]] = typer.Option(
               None, "--glob", help="in folders, only files whose name or relative path matches (repeatable), e.g. '*.pdf'"),
           manifest_out: Optional[Path] = typer.Option(
               None, "--manifest-out", help="write the manifest this run inferred (to review it and repeat the run)"),
           dry_run: bool = typer.Option(False, "--dry-run", help="only discover (and write --manifest-out); store nothing"),
           dsn: Optional[str] = DsnOption,
           target_tokens: int = typer.Option(800, help="prose chunk target size in tokens"),
           overlap_tokens: int = typer.Option(150, help="overlap carried into the next prose chunk"),
           allow_outside: bool = typer.Option(False, "--allow-outside",
                                              help="let manifest paths (and links in folders) point outside their folder")):
    """Parse, chunk, embed and store documents: the lines of manifests, and files and folders
    (recursively). A manifest line states its document's rights; --license/--source apply to the
    files no manifest line names. Title, authors, year, DOI and arXiv id a manifest leaves out are
    read from the file and marked as inferred."""
    from scirag.discover import DiscoverError, discover, write_manifest
    from scirag.hints import unknown_license_warning
    from scirag.ingest import Ingester, ingest_entries

    try:
        found = discover(paths, glob, license, source, allow_outside)
    except DiscoverError as exc:
        db.echo(f"error: {exc}")
        raise typer.Exit(2) from None
    if found.skipped:
        db.echo(f"{len(found.skipped)} file(s) in the folders did not match --glob")
    if manifest_out:
        outside = write_manifest(found, manifest_out)
        db.echo(f"wrote {manifest_out} ({len(found.items)} line(s))"
                + (f"; {len(outside)} path(s) lie outside its folder: repeat with --allow-outside" if outside else ""))
    if dry_run:
        for line_no, item in found.items:
            print(f"{line_no}: {getattr(item, 'id', None)}: {item if not hasattr(item, 'path') else item.path}")
        return
    label = " ".join(str(p) for p in paths)
    with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
        ingester = Ingester(conn, target_tokens=target_tokens, overlap_tokens=overlap_tokens)
        counts = ingest_entries(conn, found.items, label, ingester)
        if counts["added"] + counts["duplicate"]:
            # fresh BM25 postings (new chunks, or chunks re-filed under a new license) into blocks
            conn.execute("SELECT scirag.kw_compact()")
            conn.commit()
        # added or found again by this run (a duplicate of an 'unknown' document is just as invisible)
        unknown = conn.execute(
            """SELECT count(DISTINCT d.id) FROM scirag.ingest_reports r JOIN scirag.documents d ON d.id = r.document_id
               WHERE r.run_id = %s AND d.license = 'unknown'""", (counts["run_id"],)).fetchone()[0]
    warning = unknown_license_warning(unknown)
    if warning:
        db.echo(warning)
    raise typer.Exit(0 if counts["added"] + counts["duplicate"] > 0 or counts["failed"] == 0 else 1)


@app.command()
def retrieve(question: str = typer.Argument(...),
             k: int = typer.Option(10, "-k", help="results to show"),
             profile: str = typer.Option("interactive", help="interactive or deep"),
             layers: Optional[str] = typer.Option(None, help="comma-separated layers, e.g. keyword,vector"),
             licenses: Optional[str] = typer.Option(
                 None, "--licenses", help="scirag.licenses for the call (narrows the role's ceiling; default: public,open_commercial)"),
             dsn: Optional[str] = DsnOption,
             as_json: bool = typer.Option(False, "--json", help="print JSON rows")):
    """Print ranked, cited chunks for a question (scirag.retrieve, as the reader role)."""
    options = {"layers": [x.strip() for x in layers.split(",")]} if layers else {}
    with db.connect(dsn or db.default_dsn(), role=db.READER_ROLE) as conn:
        if licenses is not None:
            conn.execute("SELECT set_config('scirag.licenses', %s, false)", (licenses,))
        rows = conn.execute(
            """SELECT rank, score, layers, title, section_path, is_table, content, citation
               FROM scirag.retrieve(%s, k => %s, profile => %s, options => %s)""",
            (question, k, profile, json.dumps(options))).fetchall()
        trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
    if as_json:
        print(json.dumps([dict(zip(("rank", "score", "layers", "title", "section_path", "is_table",
                                     "content", "citation"), r)) for r in rows], indent=2, default=str))
        return
    print(f"Q: {question}\n")
    for rank, score, layer_ranks, title, _path, is_table, content, citation in rows:
        found = ", ".join(f"{name}#{r}" for name, r in sorted(layer_ranks.items(), key=lambda x: x[1]))
        crumb = citation.get("section_path")  # the path without a heading that repeats the title
        print(f"[{rank}] {title}" + (f" > {crumb}" if crumb else "") + ("  (table)" if is_table else ""))
        print(f"    score {score:.4f}  found by {found}  cite: {citation.get('cite')}")
        body = content.split("\n\n", 1)[-1].replace("\n", " ")
        print(f"    {body[:300]}{'...' if len(body) > 300 else ''}\n")
    if not rows:
        from scirag.hints import no_evidence_hint
        print("(no evidence in your scope)")
        print(no_evidence_hint(dsn or db.default_dsn(), licenses, "retrieve", question))
    stages = ", ".join(f"{s['stage']}:{s['status']} {s['ms']}ms n={s['candidates']}" for s in trace.get("stages", []))
    print(f"trace: {stages}")


ABLATIONS = {
    "keyword": ("interactive", {"layers": ["keyword"]}),
    "vector": ("interactive", {"layers": ["vector"]}),
    "interactive": ("interactive", {}),
}


def single_config(profile: str, layers: Optional[str], options: Optional[str], name: Optional[str]):
    opts = json.loads(options) if options else {}
    if layers:
        opts["layers"] = [x.strip() for x in layers.split(",")]
    label = name or (layers.replace(",", "+") if layers else profile) + (f" {options}" if options else "")
    return label, profile, opts


@eval_app.command("beir")
def eval_beir(corpus_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"),
              split: str = typer.Option("train", help="qrels split"),
              layers: Optional[str] = typer.Option(None, help="comma-separated layers for a single run"),
              profile: str = typer.Option("interactive", help="retrieval profile"),
              ablation: bool = typer.Option(False, help="run keyword-only, vector-only and the interactive hybrid"),
              limit: Optional[int] = typer.Option(None, help="only the first N queries (smoke runs)"),
              options: Optional[str] = typer.Option(None, "--options", help="JSON options for scirag.retrieve (weights, budgets_ms, ...)"),
              name: Optional[str] = typer.Option(None, help="label of the run (ablation name)"),
              dsn: Optional[str] = DsnOption):
    """Load a BEIR corpus into its own database (once), run its queries through
    scirag.retrieve, store and print nDCG@10, Recall@100 and MRR@10 (document level)."""
    from scirag.beir import beir_dsn, load_corpus, run_config
    from scirag.evaluation import print_table

    target = beir_dsn(dsn or db.default_dsn(), corpus_dir)
    db.echo(f"loading {corpus_dir} (once) into {db.conninfo_to_dict(target).get('dbname')}")
    load_corpus(target, corpus_dir)
    if ablation:
        configs = [(name, p, o) for name, (p, o) in ABLATIONS.items()]
    else:
        configs = [single_config(profile, layers, options, name)]
    results = [run_config(target, corpus_dir, split, name, p, o, limit) for name, p, o in configs]
    print_table(results, ["run", "config", "queries", "ndcg@10", "recall@100", "mrr@10", "p50_ms", "p95_ms"])


@eval_app.command("scitab")
def eval_scitab(data_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="SciTab folder (tables.jsonl, claims_dev.jsonl)"),
                layers: Optional[str] = typer.Option(None, help="comma-separated layers for a single run"),
                profile: str = typer.Option("interactive", help="retrieval profile"),
                ablation: bool = typer.Option(False, help="run keyword-only, vector-only and the interactive hybrid"),
                limit: Optional[int] = typer.Option(None, help="only the first N claims"),
                options: Optional[str] = typer.Option(None, "--options", help="JSON options for scirag.retrieve (weights, budgets_ms, ...)"),
                name: Optional[str] = typer.Option(None, help="label of the run (ablation name)"),
                dsn: Optional[str] = DsnOption):
    """Table retrieval on SciTab: find the table each claim is about (hit@1/5/10, MRR)."""
    from scirag.evaluation import print_table
    from scirag.scitab import load, run_config, scitab_dsn

    target = scitab_dsn(dsn or db.default_dsn())
    load(target, data_dir)
    if ablation:
        configs = [(name, p, o) for name, (p, o) in ABLATIONS.items()]
    else:
        configs = [single_config(profile, layers, options, name)]
    results = [run_config(target, data_dir, name, p, o, limit) for name, p, o in configs]
    print_table(results, ["run", "config", "claims", "hit@1", "hit@5", "hit@10", "mrr", "p50_ms"])


@eval_app.command("pdf")
def eval_pdf(folder: Path = typer.Argument(..., exists=True, file_okay=False,
                                           help="folder of PDFs with manifest.jsonl, tables.jsonl, headings.jsonl, questions.jsonl"),
             engine: Optional[str] = typer.Option(None, help="PDF engine (layout, pdfplumber, pypdf, docling if installed); "
                                                  "default SCIRAG_PDF_ENGINE or layout"),
             profile: str = typer.Option("interactive", help="retrieval profile for qa_hit5"),
             reuse: bool = typer.Option(False, "--reuse", help="score what the eval database holds, without reloading"),
             dsn: Optional[str] = DsnOption):
    """PDF fidelity against ground truth: tables, section tree, qa_hit5, pages/s and peak memory.
    Loads the folder into its own database (scirag_eval_pdf), replacing what it held."""
    from scirag.evaluation import print_table
    from scirag.evalpdf import REPORT_COLUMNS, eval_dsn, report_rows, run_eval

    result = run_eval(eval_dsn(dsn or db.default_dsn()), folder, engine=engine, profile=profile, reload=not reuse)
    print_table(report_rows(result), REPORT_COLUMNS)
    load = result["load"]
    if "pages" in load:
        print(f"engine {load['engine']}: {load['pages']} pages in {load['seconds']}s = {load['pages_per_s']} pages/s "
              f"({load['pages_per_cpu_s']} pages per CPU second parse+chunk+embed+store, "
              f"{load['parse_pages_per_cpu_s']} parse+chunk), peak {load['peak_mb']} MB; "
              f"parsers {', '.join(load['parsers'])}; eval run {result['run_id']}")
        for ext, status, reason in load["problems"]:
            print(f"  {ext}: {status} {reason or ''}")


from scirag.cli_graph import graph_app  # noqa: E402
app.add_typer(graph_app, name="graph")


from scirag.cli_answer import register as register_answer  # noqa: E402
register_answer(app, eval_app)
from scirag.cli_preset import preset_app  # noqa: E402
app.add_typer(preset_app, name="preset")
from scirag.server.cli import register as register_server  # noqa: E402
register_server(app)
from scirag.cli_maint import register as register_maint  # noqa: E402
register_maint(app)
if __name__ == "__main__":
    app()
