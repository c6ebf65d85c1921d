"""`scirag eval ...`: retrieval benchmarks (BEIR, SciTab), PDF fidelity, the seed
questions through retrieval and answers, and the HTML report."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Optional

import typer

from scirag import db
from scirag.evaluation import report
from scirag.cli_answer import answer_options
from scirag.cli_options import BenchDsnOption, DsnOption, ExtraOption, LicensesOption, PresetOption
from scirag.evaluation.runs import print_table


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


def eval_beir(
    corpus_dir: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"
    ),
    split: str = typer.Option("train", help="qrels split"),
    layers: Optional[str] = typer.Option(None, help="comma-separated layers for a single run"),
    profile: str = typer.Option("interactive", help="retrieval profile"),
    ablation: bool = typer.Option(False, help="run keyword-only, vector-only and the interactive hybrid"),
    limit: Optional[int] = typer.Option(None, help="only the first N queries (smoke runs)"),
    options: Optional[str] = typer.Option(
        None, "--options", help="JSON options for scirag.retrieve (weights, budgets_ms, ...)"
    ),
    name: Optional[str] = typer.Option(None, help="label of the run (ablation name)"),
    k: int = typer.Option(
        100, "-k", min=10, max=1000, help="results per query (deep reranks max(k, pool): -k 10 reranks the pool)"
    ),
    dsn: Optional[str] = BenchDsnOption,
):
    """Load a BEIR corpus into its own database (once), run its queries through
    scirag.retrieve, store and print nDCG@10, Recall@100 and MRR@10 (document level;
    with -k below 100 the recall is at k)."""
    from scirag.evaluation.beir import beir_dsn, load_corpus, run_config

    target = beir_dsn(dsn, corpus_dir)
    db.echo(f"loading {corpus_dir} (once) into {db.conninfo_to_dict(target).get('dbname')}")
    load_corpus(target, corpus_dir)
    if ablation:
        configs = [(name, p, o) for name, (p, o) in ABLATIONS.items()]
    else:
        configs = [single_config(profile, layers, options, name)]
    results = [run_config(target, corpus_dir, split, name, p, o, limit, k) for name, p, o in configs]
    print_table(results, ["run", "config", "queries", "ndcg@10", "recall@100", "mrr@10", "p50_ms", "p95_ms"])


def eval_scitab(
    data_dir: Path = typer.Argument(
        ..., exists=True, file_okay=False, help="SciTab folder (tables.jsonl, claims_dev.jsonl)"
    ),
    layers: Optional[str] = typer.Option(None, help="comma-separated layers for a single run"),
    profile: str = typer.Option("interactive", help="retrieval profile"),
    ablation: bool = typer.Option(False, help="run keyword-only, vector-only and the interactive hybrid"),
    limit: Optional[int] = typer.Option(None, help="only the first N claims"),
    options: Optional[str] = typer.Option(
        None, "--options", help="JSON options for scirag.retrieve (weights, budgets_ms, ...)"
    ),
    name: Optional[str] = typer.Option(None, help="label of the run (ablation name)"),
    dsn: Optional[str] = BenchDsnOption,
):
    """Table retrieval on SciTab: find the table each claim is about (hit@1/5/10, MRR)."""
    from scirag.evaluation.scitab import load, run_config, scitab_dsn

    target = scitab_dsn(dsn)
    load(target, data_dir)
    if ablation:
        configs = [(name, p, o) for name, (p, o) in ABLATIONS.items()]
    else:
        configs = [single_config(profile, layers, options, name)]
    results = [run_config(target, data_dir, name, p, o, limit) for name, p, o in configs]
    print_table(results, ["run", "config", "claims", "hit@1", "hit@5", "hit@10", "mrr", "p50_ms"])


def eval_pdf(
    folder: Path = typer.Argument(
        ...,
        exists=True,
        file_okay=False,
        help="folder of PDFs with manifest.jsonl, tables.jsonl, headings.jsonl, questions.jsonl",
    ),
    engine: Optional[str] = typer.Option(
        None, help="PDF engine (layout, pdfplumber, pypdf, docling if installed); default SCIRAG_PDF_ENGINE or layout"
    ),
    profile: str = typer.Option("interactive", help="retrieval profile for qa_hit5"),
    reuse: bool = typer.Option(False, "--reuse", help="score what the eval database holds, without reloading"),
    dsn: Optional[str] = BenchDsnOption,
):
    """PDF fidelity against ground truth: tables, section tree, qa_hit5, pages/s and peak memory.
    Loads the folder into its own database (scirag_eval_pdf), replacing what it held."""
    from scirag.evaluation.pdf import REPORT_COLUMNS, eval_dsn, report_rows, run_eval

    result = run_eval(eval_dsn(dsn), folder, engine=engine, profile=profile, reload=not reuse)
    print_table(report_rows(result), REPORT_COLUMNS)
    load = result["load"]
    if "pages" in load:
        print(
            f"engine {load['engine']}: {load['pages']} pages in {load['seconds']}s = {load['pages_per_s']} pages/s "
            f"({load['pages_per_cpu_s']} pages per CPU second parse+chunk+embed+store, "
            f"{load['parse_pages_per_cpu_s']} parse+chunk), peak {load['peak_mb']} MB; "
            f"parsers {', '.join(load['parsers'])}; eval run {result['run_id']}"
        )
        for ext, status, reason in load["problems"]:
            print(f"  {ext}: {status} {reason or ''}")


def _dataset(
    dataset: str, dsn: str | None, questions: Optional[List[Path]], data: Optional[Path], limit: Optional[int]
):
    """(target dsn, questions, origin) for a dataset name. Question files are YAML
    (domain/questions.yaml) or JSONL with acceptable answers; several are one set."""
    from scirag.evaluation import qa as evalqa

    base = dsn or db.default_dsn()
    if dataset == "pubmedqa":
        from scirag.evaluation import pubmedqa

        target = pubmedqa.pubmedqa_dsn(dsn)
        qs = pubmedqa.build(target, data or pubmedqa.DATA, limit)
        return target, qs, str(data or pubmedqa.DATA)
    paths = list(questions or []) or [evalqa.QUESTIONS_FILE]
    qs = evalqa.load_question_files(paths)
    if limit:
        qs = qs[:limit]
    return base, qs, ",".join(str(p) for p in paths)


def eval_retrieval(
    dataset: str = typer.Option("demo", help="demo (domain/questions.yaml) or pubmedqa"),
    questions: Optional[List[Path]] = typer.Option(
        None, help="question file: YAML, or JSONL with acceptable answers (repeat for several)"
    ),
    profiles: Optional[str] = typer.Option(None, help="comma-separated profiles (default: all)"),
    ablation: bool = typer.Option(
        True, "--ablation/--no-ablation", help="also run each profile with each layer off in turn"
    ),
    k: int = typer.Option(10, "-k", help="depth scored (hit@5, hit@10, MRR@k)"),
    limit: Optional[int] = typer.Option(None, help="only the first N questions"),
    data: Optional[Path] = typer.Option(None, help="PubMedQA json (pubmedqa dataset)"),
    licenses: Optional[str] = LicensesOption,
    dsn: Optional[str] = DsnOption,
):
    """hit@5, hit@10 and MRR per ablation config through scirag.retrieve, stored in eval_runs/eval_results."""
    from scirag.evaluation import qa as evalqa

    target, qs, origin = _dataset(dataset, dsn, questions, data, limit)
    with evalqa.reader_connection(target, licenses) as reader:
        configs = evalqa.retrieval_configs(reader, profiles.split(",") if profiles else None, ablation)
    db.echo(f"{len(qs)} questions x {len(configs)} configurations on {db.conninfo_to_dict(target).get('dbname')}")
    results = evalqa.run_retrieval(target, qs, configs, dataset=dataset, k=k, licenses=licenses, origin=origin)
    print_table(results, ["run", "config", "questions", "hit@5", "hit@10", "mrr", "p50_ms"])


def eval_answer(
    dataset: str = typer.Option("demo", help="demo (domain/questions.yaml) or pubmedqa"),
    questions: Optional[List[Path]] = typer.Option(
        None, help="question file: YAML, or JSONL with acceptable answers (repeat for several)"
    ),
    limit: Optional[int] = typer.Option(None, help="only the first N questions"),
    data: Optional[Path] = typer.Option(None, help="PubMedQA json (pubmedqa dataset)"),
    k: int = typer.Option(10, "-k"),
    max_sources: int = typer.Option(5, "--max-sources"),
    profile: str = typer.Option("interactive"),
    layers: Optional[str] = typer.Option(None, help="comma-separated retrieval layers"),
    answerer: str = typer.Option(
        "auto",
        help="auto, extractive or model (the answer runs inside PostgreSQL: the server's environment decides the model)",
    ),
    compress: bool = typer.Option(False, "--compress/--no-compress"),
    relevance_floor: float = typer.Option(0.0),
    config_name: Optional[str] = typer.Option(None, help="label for the run (default from the options)"),
    preset: Optional[str] = PresetOption,
    extra: Optional[str] = ExtraOption,
    licenses: Optional[str] = LicensesOption,
    dsn: Optional[str] = DsnOption,
):
    """Answer every seed question, run the mechanical checks and (with a model
    configured in this shell: SCIRAG_LLM_PROVIDER) the blind two-pass judge; store it all."""
    from scirag.evaluation import qa as evalqa
    from scirag_helpers.llm import get_llm

    target, qs, origin = _dataset(dataset, dsn, questions, data, limit)
    llm = get_llm()
    db.echo(
        f"{len(qs)} questions on {db.conninfo_to_dict(target).get('dbname')}; judge: "
        + (f"{llm.name}" if llm else "skipped (no model configured)")
    )
    opts = answer_options(k, profile, answerer, max_sources, compress, relevance_floor, False, layers, preset, extra)
    summary = evalqa.run_answers(
        target,
        qs,
        dataset=dataset,
        options=opts,
        config_name=config_name,
        licenses=licenses,
        llm=llm,
        origin=origin,
        every=1 if len(qs) <= 50 else 25,
    )
    cols = [
        "run",
        "config",
        "questions",
        "citations_ok",
        "numbers_ok",
        "supports_ok",
        "abstention_ok",
        "abstained_when_unanswerable",
        "abstained_when_answerable",
        "evidence_hit",
    ]
    if "answer_correct" in summary:
        cols[3:3] = ["answer_correct", "cited_holds_answer"]
    print_table([summary], cols + ["judged", "judge_failed", "judge_skipped"])
    by_tag = summary.get("correct_by_tag") or {}
    if len(by_tag) > 1:
        db.echo("answer correct by tag: " + ", ".join(f"{t} {r}/{n}" for t, (r, n) in by_tag.items()))
    if summary.get("judged"):
        print_table([summary], ["run", "groundedness", "citation_accuracy", "completeness", "correctness"])


def eval_report(
    out: Optional[Path] = typer.Option(None, help="HTML file (default reports/eval-report.html)"),
    pubmedqa: bool = typer.Option(
        True, "--pubmedqa/--no-pubmedqa", help="include the scirag_pubmedqa database when it exists"
    ),
    dsn: Optional[str] = DsnOption,
):
    """Write an HTML report (ablation bars, metric history, answer checks and judge scores)."""
    base = dsn or db.default_dsn()
    dsns = [base]
    if pubmedqa:
        from scirag.evaluation.pubmedqa import DB_NAME

        if report.existing_databases(base, [DB_NAME]):
            dsns.append(db.with_dbname(base, DB_NAME))
    path = report.write_report(dsns, out)
    print(path)


def eval_qasper(
    data_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="folder with train.tar.gz and dev.tar.gz"),
    split: str = typer.Option("dev", help="dev (report) or train (tune)"),
    limit_papers: Optional[int] = typer.Option(None, "--papers", help="only the first N papers (by id) with questions"),
    offset: int = typer.Option(0, help="skip the first N papers (by id)"),
    answerer: str = typer.Option("extractive", help="extractive (offline) or model (needs a configured model)"),
    k: int = typer.Option(10, "-k", help="chunks retrieved per question"),
    max_sources: int = typer.Option(5, "--max-sources"),
    profile: str = typer.Option("interactive"),
    config_name: Optional[str] = typer.Option(None, help="label for the run (default: answerer and split)"),
    out: Optional[Path] = typer.Option(None, help="also write one JSON line per question here"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as one JSON object"),
    extra: Optional[str] = ExtraOption,
    dsn: Optional[str] = BenchDsnOption,
):
    """QASPER: load the split's papers (once) into their own database through the
    normal loader, ask each question scoped to its own paper, and report Answer F1
    (overall and per answer type), abstention precision/recall, evidence recall@5,
    latency and confidence AUROC; the run and one row per question go to the eval tables."""
    from scirag.evaluation import qasper

    if split not in ("dev", "train", "test"):
        raise typer.BadParameter(f"--split {split!r}: use dev, train or test")
    archive = data_dir / f"{split}.tar.gz"
    papers, items = qasper.read_split(archive)
    papers, items = qasper.select(papers, items, limit_papers, offset)
    target = qasper.qasper_dsn(dsn, split)
    qasper.build(target, papers)
    options = {"k": k, "profile": profile, "answerer": answerer, "max_sources": max_sources}
    if extra:
        options.update(json.loads(extra))
    db.echo(f"{len(items)} questions on {len(papers)} papers, {db.conninfo_to_dict(target).get('dbname')}")
    rows = qasper.ask_all(target, items, options)
    summary = qasper.summarize(rows)
    name = config_name or f"{answerer} {split}"
    run_id = qasper.store(target, split, name, options, rows, summary)
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    if as_json:
        print(json.dumps({"run": run_id, **summary}))
    else:
        print_table(
            [{"metric": "run", "value": run_id}] + [{"metric": m, "value": v} for m, v in summary.items()],
            ["metric", "value"],
        )


def eval_compare(
    run_a: int = typer.Argument(..., help="the run compared against (before)"),
    run_b: int = typer.Argument(..., help="the run compared (after)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object per metric"),
    dsn: Optional[str] = DsnOption,
):
    """Run B against run A on the questions both scored (scirag.eval_compare): per
    metric, the questions paired, both means, the mean paired difference B - A with its
    standard error and z (their ratio), both medians, and how many questions went up and
    down. A benchmark's runs live in its own database: name it in --dsn (e.g. dbname=scirag_qasper_dev)."""
    from psycopg.rows import dict_row

    target = dsn or db.default_dsn()
    with db.connect(target, role=db.LOADER_ROLE, autocommit=True) as conn:
        found = {r[0] for r in conn.execute("SELECT id FROM scirag.eval_runs WHERE id = ANY(%s)", ([run_a, run_b],))}
        missing = [str(r) for r in (run_a, run_b) if r not in found]
        if missing:
            name = db.conninfo_to_dict(target).get("dbname") or "the default database"
            raise typer.BadParameter(f"no evaluation run {', '.join(missing)} in {name} (scirag.eval_runs)")
        with conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute("SELECT * FROM scirag.eval_compare(%s, %s)", (run_a, run_b)).fetchall()
    if not rows:
        raise typer.BadParameter(f"runs {run_a} and {run_b} share no scored question")
    if as_json:
        for r in rows:
            print(json.dumps(r))
        return
    print_table(rows, ["metric", "n", "mean_a", "mean_b", "diff", "se", "z", "median_a", "median_b", "better", "worse"])


def eval_screening(
    dataset: Path = typer.Argument(
        ..., help="screening CSV (gzip or plain): record_id, title, abstract, label_included (1/0)"
    ),
    seeds: int = typer.Option(5, "--seeds", min=1, max=100, help="simulated reviews, each from its own prior pair"),
    first_seed: int = typer.Option(0, "--first-seed", min=0, max=1_000_000, help="seed of the first review"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object (means and per-seed rows)"),
    store: bool = typer.Option(True, "--store/--no-store", help="write the run to eval_runs/eval_results"),
    minilm: float = typer.Option(
        0.0, "--minilm", min=0.0, max=4.0, help="weight of MiniLM embedding features beside TF-IDF (0: off; try 0.5)"
    ),
    asreview: Optional[Path] = typer.Option(
        None,
        "--asreview",
        help="ASReview LAB's asreview program (installed by scripts/install_asreview.sh): run its default "
        "model from the same priors and seeds and print both side by side",
    ),
    dsn: Optional[str] = DsnOption,
):
    """Simulate active-learning title/abstract screening from a labelled set: each seed
    starts from 1 included + 1 excluded record, the screener retrains after every
    decision and shows the most likely relevant record next. Reports WSS@95, recall
    after 10 % and 20 % screened and records needed to find every inclusion."""
    from scirag import screening
    from scirag.evaluation import asreview_side

    if asreview is not None and not (asreview.is_file() and os.access(asreview, os.X_OK)):
        raise typer.BadParameter(
            f"{asreview} is not an executable file (scripts/bench_screening.sh installs it as "
            ".venv-asreview/bin/asreview)",
            param_hint="--asreview",
        )
    try:
        data = screening.load_dataset(dataset)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="DATASET") from None
    result = screening.evaluate(data, seeds, first_seed=first_seed, minilm=minilm)
    side = None
    if asreview is not None:
        try:
            theirs = asreview_side.asreview_runs(str(asreview), data, seeds, first_seed)
        except RuntimeError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
        side = asreview_side.side_by_side(data, result, theirs)
        result["asreview"] = {**side, "per_seed": theirs}
    if store:
        result["run_id"] = screening.store(dsn or db.default_dsn(), result)
    if as_json:
        print(json.dumps(result))
        return
    print_table(
        result["per_seed"],
        ["seed", "wss95", "recall_at_10pct", "recall_at_20pct", "records_to_95", "records_to_all", "cpu_s"],
    )
    print_table(
        [result],
        ["dataset", "records", "included", "seeds", "wss95", "recall_at_10pct", "recall_at_20pct", "records_to_all"],
    )
    if side is not None:
        print(f"Side by side, means over {seeds} seeds (same priors and seeds for both):")
        print_table([side], asreview_side.COLUMNS)
