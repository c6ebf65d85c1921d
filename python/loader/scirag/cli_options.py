"""Options shared by several `scirag` commands (one definition each)."""

from __future__ import annotations

import typer

DSN_HELP = "libpq connection string (default: SCIRAG_DSN, PG*, or the project cluster)"


def dsn_option(help: str = DSN_HELP):
    """The --dsn option; a command whose connection must be special says so in its help."""
    return typer.Option(None, "--dsn", help=help)


DsnOption = dsn_option()
# benchmark corpora live in databases of their own unless the DSN names one
BenchDsnOption = dsn_option(
    "libpq connection string; without a dbname the benchmark loads into a database of "
    "its own on that server (default: SCIRAG_DSN, PG*, or the project cluster)"
)

LicensesOption = typer.Option(
    None,
    "--licenses",
    help="scirag.licenses for the call (narrows the reader's ceiling; default: public,open_commercial)",
)
PresetOption = typer.Option(
    None, "--preset", help="a scirag.presets name (sources, profile, enrichment, consolidation)"
)
ExtraOption = typer.Option(
    None, "--options", help='more scirag.answer options as JSON, e.g. \'{"consolidate": true, "enrich": true}\''
)
