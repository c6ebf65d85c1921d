"""CLI commands for grounded answers and their evaluation:

  scirag ask "question"          grounded answer with numbered sources
  scirag eval retrieval          hit@5 / hit@10 / MRR per ablation config (seed questions)
  scirag eval answer             answers + mechanical checks + blind two-pass judge
  scirag eval report             HTML report with charts (reports/eval-report.html)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from scirag import db
from scirag.cli_options import DsnOption

LicensesOption = typer.Option(None, "--licenses",
                              help="scirag.licenses for the call (narrows the reader's ceiling; default: public,open_commercial)")


def _answer_options(k, profile, answerer, max_sources, compress, relevance_floor, include_retracted,
                    layers=None, preset=None, extra=None) -> dict:
    opts = {"k": k, "profile": profile, "answerer": answerer, "max_sources": max_sources}
    if preset:
        # the preset decides the number of sources and the profile unless given here
        opts = {"k": k, "answerer": answerer, "preset": preset}
    if compress:
        opts["compress"] = {"enabled": True, "relevance_floor": relevance_floor}
    if include_retracted:
        opts["include_retracted"] = True
    if layers:
        opts["retrieve"] = {"layers": [x.strip() for x in layers.split(",") if x.strip()]}
    if extra:
        try:
            more = json.loads(extra)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"--options is not valid JSON: {exc.msg}") from None
        if not isinstance(more, dict):
            raise typer.BadParameter("--options must be a JSON object (scirag.answer options)")
        opts.update(more)
    return opts


PresetOption = typer.Option(None, "--preset", help="a scirag.presets name (sources, profile, enrichment, consolidation)")
ExtraOption = typer.Option(None, "--options",
                           help='more scirag.answer options as JSON, e.g. \'{"consolidate": true, "enrich": true}\'')


def _dataset(dataset: str, dsn: str | None, questions: Optional[List[Path]], data: Optional[Path],
             limit: Optional[int]):
    """(target dsn, questions, origin) for a dataset name. Question files are YAML
    (domain/questions.yaml) or JSONL with acceptable answers; several are one set."""
    from scirag import evalqa

    base = dsn or db.default_dsn()
    if dataset == "pubmedqa":
        from scirag import pubmedqa
        target = pubmedqa.pubmedqa_dsn(base)
        qs = pubmedqa.build(target, data or pubmedqa.DATA, limit)
        return target, qs, str(data or pubmedqa.DATA)
    paths = list(questions or []) or [evalqa.QUESTIONS_FILE]
    qs = evalqa.load_question_files(paths)
    if limit:
        qs = qs[:limit]
    return base, qs, ",".join(str(p) for p in paths)


def register(app: typer.Typer, eval_app: typer.Typer) -> None:

    @app.command("ask")
    def ask_cmd(question: str = typer.Argument(..., help="the question"),
                k: int = typer.Option(10, "-k", help="chunks to retrieve (the complete evidence view)"),
                max_sources: int = typer.Option(5, "--max-sources", help="numbered sources shown to the answerer"),
                profile: str = typer.Option("interactive", help="retrieval profile"),
                layers: Optional[str] = typer.Option(None, help="comma-separated retrieval layers"),
                answerer: str = typer.Option("auto", help="auto (model when configured, else extractive), extractive, model"),
                compress: bool = typer.Option(False, "--compress/--no-compress", help="question-aware source compression"),
                relevance_floor: float = typer.Option(0.0, help="compression: drop sources below this relevance"),
                include_retracted: bool = typer.Option(False, help="let retracted documents answer"),
                preset: Optional[str] = PresetOption,
                extra: Optional[str] = ExtraOption,
                licenses: Optional[str] = LicensesOption,
                dsn: Optional[str] = DsnOption,
                as_json: bool = typer.Option(False, "--json", help="print the answer object")):
        """Answer a question from the corpus with numbered, cited sources (scirag.answer, as the reader role)."""
        from scirag.ask import ask, format_answer

        opts = _answer_options(k, profile, answerer, max_sources, compress, relevance_floor, include_retracted, layers,
                               preset, extra)
        result = ask(question, opts, dsn, licenses)
        if as_json:
            print(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            print(format_answer(question, result))
            if not result.get("sources"):   # issue 17: say why an answer may be empty, never what is hidden
                from scirag.hints import no_evidence_hint
                print(no_evidence_hint(dsn or db.default_dsn(), licenses, "ask", question))

    @eval_app.command("retrieval")
    def eval_retrieval(dataset: str = typer.Option("demo", help="demo (domain/questions.yaml) or pubmedqa"),
                       questions: Optional[List[Path]] = typer.Option(
                           None, help="question file: YAML, or JSONL with acceptable answers (repeat for several)"),
                       profiles: Optional[str] = typer.Option(None, help="comma-separated profiles (default: all)"),
                       ablation: bool = typer.Option(True, "--ablation/--no-ablation",
                                                     help="also run each profile with each layer off in turn"),
                       k: int = typer.Option(10, "-k", help="depth scored (hit@5, hit@10, MRR@k)"),
                       limit: Optional[int] = typer.Option(None, help="only the first N questions"),
                       data: Optional[Path] = typer.Option(None, help="PubMedQA json (pubmedqa dataset)"),
                       licenses: Optional[str] = LicensesOption,
                       dsn: Optional[str] = DsnOption):
        """hit@5, hit@10 and MRR per ablation config through scirag.retrieve, stored in eval_runs/eval_results."""
        from scirag import evalqa
        from scirag.evaluation import print_table

        target, qs, origin = _dataset(dataset, dsn, questions, data, limit)
        with evalqa.reader_connection(target, licenses) as reader:
            configs = evalqa.retrieval_configs(reader, profiles.split(",") if profiles else None, ablation)
        db.echo(f"{len(qs)} questions x {len(configs)} configurations on {db.conninfo_to_dict(target).get('dbname')}")
        results = evalqa.run_retrieval(target, qs, configs, dataset=dataset, k=k, licenses=licenses, origin=origin)
        print_table(results, ["run", "config", "questions", "hit@5", "hit@10", "mrr", "p50_ms"])

    @eval_app.command("answer")
    def eval_answer(dataset: str = typer.Option("demo", help="demo (domain/questions.yaml) or pubmedqa"),
                    questions: Optional[List[Path]] = typer.Option(
                        None, help="question file: YAML, or JSONL with acceptable answers (repeat for several)"),
                    limit: Optional[int] = typer.Option(None, help="only the first N questions"),
                    data: Optional[Path] = typer.Option(None, help="PubMedQA json (pubmedqa dataset)"),
                    k: int = typer.Option(10, "-k"),
                    max_sources: int = typer.Option(5, "--max-sources"),
                    profile: str = typer.Option("interactive"),
                    layers: Optional[str] = typer.Option(None, help="comma-separated retrieval layers"),
                    answerer: str = typer.Option("auto", help="auto, extractive or model (the answer runs inside PostgreSQL: the server's environment decides the model)"),
                    compress: bool = typer.Option(False, "--compress/--no-compress"),
                    relevance_floor: float = typer.Option(0.0),
                    config_name: Optional[str] = typer.Option(None, help="label for the run (default from the options)"),
                    preset: Optional[str] = PresetOption,
                    extra: Optional[str] = ExtraOption,
                    licenses: Optional[str] = LicensesOption,
                    dsn: Optional[str] = DsnOption):
        """Answer every seed question, run the mechanical checks and (with a model
        configured in this shell: SCIRAG_LLM_PROVIDER) the blind two-pass judge; store it all."""
        from scirag import evalqa
        from scirag.evaluation import print_table
        from scirag_helpers.llm import get_llm

        target, qs, origin = _dataset(dataset, dsn, questions, data, limit)
        llm = get_llm()
        db.echo(f"{len(qs)} questions on {db.conninfo_to_dict(target).get('dbname')}; judge: "
                + (f"{llm.name}" if llm else "skipped (no model configured)"))
        opts = _answer_options(k, profile, answerer, max_sources, compress, relevance_floor, False, layers,
                               preset, extra)
        summary = evalqa.run_answers(target, qs, dataset=dataset, options=opts, config_name=config_name,
                                     licenses=licenses, llm=llm, origin=origin,
                                     every=1 if len(qs) <= 50 else 25)
        cols = ["run", "config", "questions", "citations_ok", "numbers_ok", "supports_ok", "abstention_ok",
                "abstained_when_unanswerable", "abstained_when_answerable", "evidence_hit"]
        if "answer_correct" in summary:
            cols[3:3] = ["answer_correct", "cited_holds_answer"]
        print_table([summary], cols + ["judged", "judge_failed", "judge_skipped"])
        if summary.get("judged"):
            print_table([summary], ["run", "groundedness", "citation_accuracy", "completeness", "correctness"])

    @eval_app.command("report")
    def eval_report(out: Optional[Path] = typer.Option(None, help="HTML file (default reports/eval-report.html)"),
                    pubmedqa: bool = typer.Option(True, "--pubmedqa/--no-pubmedqa",
                                                  help="include the scirag_pubmedqa database when it exists"),
                    dsn: Optional[str] = DsnOption):
        """Write an HTML report (ablation bars, metric history, answer checks and judge scores)."""
        from scirag import report

        base = dsn or db.default_dsn()
        dsns = [base]
        if pubmedqa:
            from scirag.pubmedqa import DB_NAME, pubmedqa_dsn
            if report.existing_databases(base, [DB_NAME]):
                dsns.append(pubmedqa_dsn(base))
        path = report.write_report(dsns, out)
        print(path)
