"""`scirag preset list|show|set|delete`: named pipeline configurations (scirag.presets).

Reading runs as the reader role; writing as the loader role, which alone may call
scirag.preset_set / scirag.preset_delete. Validation happens in the database
(scirag.preset_validate), so the CLI and SQL clients can never disagree on what
a valid preset is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import psycopg
import typer

from scirag import db, routing
from scirag.cli_options import DsnOption


def _fail(exc: Exception) -> None:
    if isinstance(exc, psycopg.OperationalError) and exc.sqlstate is None:  # the database is down
        from scirag.errors import error_line

        typer.echo(error_line(exc), err=True)
        raise typer.Exit(1)
    msg = getattr(getattr(exc, "diag", None), "message_primary", None) or str(exc)
    hint = getattr(getattr(exc, "diag", None), "message_hint", None)
    typer.echo(f"error: {msg}" + (f"\nhint: {hint}" if hint else ""), err=True)
    raise typer.Exit(1)


def _parse_param(item: str) -> tuple[str, str, object]:
    """'section.key=value' with value as JSON (numbers, true/false, null, "text"), else a plain string."""
    if "=" not in item or "." not in item.split("=", 1)[0]:
        raise typer.BadParameter(f"expected section.key=value, got {item!r}")
    path, raw = item.split("=", 1)
    section, key = path.split(".", 1)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return section.strip(), key.strip(), value


def preset_list(dsn: Optional[str] = DsnOption, as_json: bool = typer.Option(False, "--json", help="print JSON rows")):
    """List the presets with their descriptions and what they override."""
    try:
        with routing.connect_reader(dsn, role=db.READER_ROLE) as conn:
            rows = conn.execute("SELECT name, description, updated_at, overrides FROM scirag.preset_list()").fetchall()
    except psycopg.Error as exc:
        _fail(exc)
    if as_json:
        print(
            json.dumps(
                [{"name": n, "description": d, "updated_at": u.isoformat(), "overrides": o} for n, d, u, o in rows],
                indent=2,
            )
        )
        return
    for name, description, _updated, overrides in rows:
        keys = [f"{s}.{k}" for s, sec in overrides.items() for k in sec]
        print(f"{name:<20} {description or ''}")
        if keys:
            print(f"{'':<20} overrides: {', '.join(keys)}")


def preset_show(name: str = typer.Argument(..., help="preset name"), dsn: Optional[str] = DsnOption):
    """Print a preset's complete configuration (defaults filled in) as JSON."""
    try:
        with routing.connect_reader(dsn, role=db.READER_ROLE) as conn:
            config = conn.execute("SELECT scirag.preset_get(%s)", (name,)).fetchone()[0]
    except psycopg.Error as exc:
        _fail(exc)
    print(json.dumps(config, indent=2, sort_keys=True))


def preset_set(
    name: str = typer.Argument(..., help="preset name"),
    config: Optional[str] = typer.Option(None, "--config", help="the overrides as a JSON object"),
    file: Optional[Path] = typer.Option(
        None, "--file", exists=True, dir_okay=False, help="read the overrides from a JSON file"
    ),
    param: list[str] = typer.Option([], "--param", "-p", help="section.key=value, applied on top (repeatable)"),
    description: Optional[str] = typer.Option(
        None, "--description", "-d", help="what the preset is for (kept when omitted)"
    ),
    dsn: Optional[str] = DsnOption,
):
    """Create or update a preset (as the loader role). Without --config/--file the
    stored overrides are kept and --param edits them."""
    if config is not None and file is not None:
        raise typer.BadParameter("give --config or --file, not both")
    edits = [_parse_param(p) for p in param]
    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            if config is not None or file is not None:
                try:
                    overrides = json.loads(config if config is not None else file.read_text(encoding="utf-8"))
                except json.JSONDecodeError as exc:
                    typer.echo(
                        f"error: the configuration is not valid JSON ({exc.msg} at position {exc.pos})", err=True
                    )
                    raise typer.Exit(1) from None
            else:
                row = conn.execute("SELECT config FROM scirag.presets WHERE name = %s", (name,)).fetchone()
                overrides = row[0] if row else {}
            if not isinstance(overrides, dict):
                typer.echo("error: the configuration must be a JSON object", err=True)
                raise typer.Exit(1)
            for section, key, value in edits:
                overrides.setdefault(section, {})
                if not isinstance(overrides[section], dict):
                    overrides[section] = {}
                overrides[section][key] = value
            full = conn.execute(
                "SELECT scirag.preset_set(%s, %s, %s)", (name, json.dumps(overrides), description)
            ).fetchone()[0]
            conn.commit()
    except psycopg.Error as exc:
        _fail(exc)
    db.echo(f"preset {name} saved")
    print(json.dumps(full, indent=2, sort_keys=True))


def preset_delete(name: str = typer.Argument(..., help="preset name"), dsn: Optional[str] = DsnOption):
    """Delete a preset (as the loader role)."""
    try:
        with db.connect(dsn or db.default_dsn(), role=db.LOADER_ROLE) as conn:
            deleted = conn.execute("SELECT scirag.preset_delete(%s)", (name,)).fetchone()[0]
            conn.commit()
    except psycopg.Error as exc:
        _fail(exc)
    if not deleted:
        typer.echo(f"error: no preset named {name}", err=True)
        raise typer.Exit(1)
    db.echo(f"preset {name} deleted")
