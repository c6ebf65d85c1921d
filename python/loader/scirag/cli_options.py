"""Options shared by every `scirag` sub-command (one definition each)."""
from __future__ import annotations

import typer

DSN_HELP = "libpq connection string (default: SCIRAG_DSN, PG*, or the project cluster)"


def dsn_option(help: str = DSN_HELP):
    """The --dsn option; a command whose connection must be special says so in its help."""
    return typer.Option(None, "--dsn", help=help)


DsnOption = dsn_option()
