"""The scirag command line: set up a database, load documents, ask it questions.

One way of wiring commands: each command is a plain function in a `cli_<area>.py`
module (its typer options are its parameters, its docstring is its help), and the
two tables below are the only place that names commands and groups them. To add a
command, write the function and add one line here. Modules that load models, PDF
engines, the ontology's YAML, the evaluation sets or the HTTP/MCP server are imported
inside the command that needs them (each would add tens to hundreds of milliseconds
to every `scirag` start); light modules are imported at the top of cli_<area>.py.
"""

from __future__ import annotations

from typing import Callable

import typer

from scirag import cli_answer, cli_campaign, cli_db, cli_docs, cli_eval, cli_graph, cli_ingest, cli_maint, cli_preset
from scirag.server import cli as cli_server

# Top-level commands, in the order `scirag --help` lists them.
COMMANDS: list[tuple[str, Callable]] = [
    ("ingest", cli_ingest.ingest),
    ("retrieve", cli_answer.retrieve),
    ("ask", cli_answer.ask_cmd),
    ("serve", cli_server.serve),
    ("mcp", cli_server.mcp),
    ("enrich", cli_maint.enrich_cmd),
    ("doctor", cli_maint.doctor_cmd),
    ("gc", cli_maint.gc_cmd),
    ("reembed", cli_maint.reembed_cmd),
    ("dedupe", cli_maint.dedupe_cmd),
    ("retractions", cli_maint.retractions_cmd),
]

# Command groups (`scirag GROUP COMMAND`): name, help, and the group's commands.
GROUPS: list[tuple[str, str, list[tuple[str, Callable]]]] = [
    (
        "db",
        "Create and deploy scirag databases.",
        [
            ("init", cli_db.db_init),
        ],
    ),
    (
        "docs",
        "The documents of the library: list, show, delete, re-parse, correct metadata.",
        [
            ("list", cli_docs.docs_list),
            ("show", cli_docs.docs_show),
            ("rm", cli_docs.docs_rm),
            ("reparse", cli_docs.docs_reparse),
            ("set", cli_docs.docs_set),
        ],
    ),
    (
        "eval",
        "Evaluation harness.",
        [
            ("beir", cli_eval.eval_beir),
            ("scitab", cli_eval.eval_scitab),
            ("pdf", cli_eval.eval_pdf),
            ("retrieval", cli_eval.eval_retrieval),
            ("answer", cli_eval.eval_answer),
            ("qasper", cli_eval.eval_qasper),
            ("report", cli_eval.eval_report),
            ("compare", cli_eval.eval_compare),
            ("screening", cli_eval.eval_screening),
        ],
    ),
    (
        "campaign",
        "Literature campaigns: discover, screen, resolve open access, fetch PDFs, report (PRISMA).",
        [
            ("new", cli_campaign.campaign_new),
            ("discover", cli_campaign.campaign_discover),
            ("screen", cli_campaign.campaign_screen),
            ("resolve", cli_campaign.campaign_resolve),
            ("fetch", cli_campaign.campaign_fetch),
            ("assess", cli_campaign.campaign_assess),
            ("report", cli_campaign.campaign_report),
        ],
    ),
    (
        "graph",
        "Knowledge graph: extraction, entity resolution, communities.",
        [
            ("extract", cli_graph.extract),
            ("resolve-entities", cli_graph.resolve_entities),
            ("communities", cli_graph.communities),
            ("search", cli_graph.search),
        ],
    ),
    (
        "preset",
        "Named retrieval / consolidation / augmentation presets.",
        [
            ("list", cli_preset.preset_list),
            ("show", cli_preset.preset_show),
            ("set", cli_preset.preset_set),
            ("delete", cli_preset.preset_delete),
        ],
    ),
    (
        "keys",
        "API keys of the HTTP/MCP server (admin; stored hashed).",
        [
            ("add", cli_server.keys_add),
            ("list", cli_server.keys_list),
            ("revoke", cli_server.keys_revoke),
        ],
    ),
]


def build_app() -> typer.Typer:
    """The `scirag` typer application built from COMMANDS and GROUPS."""
    # rich_markup_mode=None: plain help that wraps at any width; rich's panels cut option
    # names and help words with "…" at 80 columns (issue 25)
    root = typer.Typer(
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        help="scirag: retrieval-augmented QA over scientific documents, inside PostgreSQL.",
    )
    for name, function in COMMANDS:
        root.command(name)(function)
    for group_name, group_help, commands in GROUPS:
        group = typer.Typer(no_args_is_help=True, help=group_help, rich_markup_mode=None)
        for name, function in commands:
            group.command(name)(function)
        root.add_typer(group, name=group_name)
    return root


app = build_app()


def main() -> None:
    """The `scirag` entry point: the typer app, with the errors users meet shown as one
    line with the fix (exit status 1) instead of a traceback."""
    import sys

    from scirag.errors import error_line

    try:
        app()
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            raise
        print(line, file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
