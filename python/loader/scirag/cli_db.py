"""`scirag db init`: create a database and deploy the schema."""

from __future__ import annotations

from typing import Optional

import typer

from scirag import db
from scirag.cli_options import DsnOption


def db_init(
    dsn: Optional[str] = DsnOption,
    dim: int = typer.Option(db.EMBED_DIM, help="embedding dimension (fixed per database)"),
    fresh: bool = typer.Option(False, "--fresh", help="drop the database first (tests)"),
):
    """Create the database if needed and deploy the schema with Sqitch."""
    target = dsn or db.default_dsn()
    if fresh:
        db.drop_db(target)
    db.init_db(target, dim)
    db.echo("database ready")
