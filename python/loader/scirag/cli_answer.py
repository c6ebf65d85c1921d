"""Questions to the corpus: `scirag retrieve` (ranked, cited chunks) and `scirag ask`
(a grounded answer with numbered sources)."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from scirag import db, routing
from scirag.ask import ask, format_answer
from scirag.cli_options import (
    AuthorOption,
    DocOption,
    DoiOption,
    DsnOption,
    ExtraOption,
    JournalOption,
    LicensesOption,
    PresetOption,
    YearOption,
    filter_settings,
)
from scirag.hints import no_evidence_hint


def answer_options(
    k,
    profile,
    answerer,
    max_sources,
    compress,
    relevance_floor,
    include_retracted,
    layers=None,
    preset=None,
    extra=None,
) -> dict:
    """scirag.answer options from the command-line options `ask` and `eval answer` share."""
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


def retrieve(
    question: str = typer.Argument(...),
    k: int = typer.Option(10, "-k", help="results to show"),
    profile: str = typer.Option("interactive", help="interactive or deep"),
    layers: Optional[str] = typer.Option(None, help="comma-separated layers, e.g. keyword,vector"),
    licenses: Optional[str] = typer.Option(
        None,
        "--licenses",
        help="scirag.licenses for the call (narrows the role's ceiling; default: public,open_commercial)",
    ),
    doc: Optional[List[str]] = DocOption,
    year: Optional[List[str]] = YearOption,
    author: Optional[List[str]] = AuthorOption,
    journal: Optional[List[str]] = JournalOption,
    doi: Optional[List[str]] = DoiOption,
    dsn: Optional[str] = DsnOption,
    as_json: bool = typer.Option(False, "--json", help="print JSON rows"),
):
    """Print ranked, cited chunks for a question (scirag.retrieve, as the reader role)."""
    options = {"layers": [x.strip() for x in layers.split(",")]} if layers else {}
    with routing.connect_reader(dsn, role=db.READER_ROLE) as conn:
        if licenses is not None:
            conn.execute("SELECT set_config('scirag.licenses', %s, false)", (licenses,))
        for name, value in filter_settings(doc, year, author, journal, doi).items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        rows = conn.execute(
            """SELECT rank, score, layers, title, section_path, is_table, content, citation
               FROM scirag.retrieve(%s, k => %s, profile => %s, options => %s)""",
            (question, k, profile, json.dumps(options)),
        ).fetchall()
        trace = conn.execute("SELECT scirag.last_trace()").fetchone()[0]
    if as_json:
        print(
            json.dumps(
                [
                    dict(
                        zip(("rank", "score", "layers", "title", "section_path", "is_table", "content", "citation"), r)
                    )
                    for r in rows
                ],
                indent=2,
                default=str,
            )
        )
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
        print("(no evidence in your scope)")
        print(no_evidence_hint(dsn or db.default_dsn(), licenses, "retrieve", question))
    stages = ", ".join(f"{s['stage']}:{s['status']} {s['ms']}ms n={s['candidates']}" for s in trace.get("stages", []))
    print(f"trace: {stages}")


def ask_cmd(
    question: str = typer.Argument(..., help="the question"),
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
    doc: Optional[List[str]] = DocOption,
    year: Optional[List[str]] = YearOption,
    author: Optional[List[str]] = AuthorOption,
    journal: Optional[List[str]] = JournalOption,
    doi: Optional[List[str]] = DoiOption,
    dsn: Optional[str] = DsnOption,
    as_json: bool = typer.Option(False, "--json", help="print the answer object"),
):
    """Answer a question from the corpus with numbered, cited sources (scirag.answer, as the reader role)."""
    opts = answer_options(
        k, profile, answerer, max_sources, compress, relevance_floor, include_retracted, layers, preset, extra
    )
    result = ask(question, opts, dsn, licenses, filter_settings(doc, year, author, journal, doi))
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(format_answer(question, result))
        if not result.get("sources"):  # issue 17: say why an answer may be empty, never what is hidden
            print(no_evidence_hint(dsn or db.default_dsn(), licenses, "ask", question))
