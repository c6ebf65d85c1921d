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

# Positive scope filters ("ask this paper"): each only narrows what the call may see.
DocOption = typer.Option(None, "--doc", help="only these documents (manifest or numeric ids; repeatable)")
YearOption = typer.Option(None, "--year", help="only these years: 2019, 2015-2018, -2010 or 2020- (repeatable)")
AuthorOption = typer.Option(
    None, "--author", help="only documents with an author whose name contains this (repeatable)"
)
JournalOption = typer.Option(None, "--journal", help="only documents whose venue contains this (repeatable)")
DoiOption = typer.Option(None, "--doi", help="only the document with this DOI (repeatable)")


def filter_settings(doc=None, year=None, author=None, journal=None, doi=None) -> dict[str, str]:
    """The scirag.* session settings of the positive filters given on the command line
    (lists joined with the separator each setting expects)."""
    out = {}
    for name, values, sep in (
        ("documents", doc, ","),
        ("years", year, ","),
        ("authors", author, ";"),
        ("journals", journal, ";"),
        ("dois", doi, ","),
    ):
        if values:
            out[f"scirag.{name}"] = sep.join(values)
    return out
