"""`scirag serve`, `scirag mcp` and `scirag keys add|list|revoke`."""

from __future__ import annotations

import logging
import sys
from typing import Optional

import psycopg
import typer

from scirag import db
from scirag.cli_options import dsn_option
from scirag.server.keys import Identity, KeyError_, add_key, list_keys, revoke_key

DsnOption = dsn_option("libpq connection string of an admin login (default: SCIRAG_DSN, PG*, or the project cluster)")
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _logging() -> None:
    # stderr only: stdout belongs to the MCP protocol under `scirag mcp`
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    from scirag.server.gate import EscapingFormatter

    for handler in logging.getLogger().handlers:  # control characters in any message are escaped
        handler.setFormatter(EscapingFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    for noisy in ("mcp", "httpx", "httpx2", "uvicorn.error"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _active_keys(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        if conn.execute("SELECT to_regclass('scirag.api_keys')").fetchone()[0] is None:
            raise typer.BadParameter("scirag.api_keys is missing: deploy the schema first (scirag db init)")
        return conn.execute("SELECT count(*) FROM scirag.api_keys WHERE revoked_at IS NULL").fetchone()[0]


def serve(
    dsn: Optional[str] = DsnOption,
    host: str = typer.Option("127.0.0.1", help="address to bind (non-loopback only when keys exist)"),
    port: int = typer.Option(8000, envvar="SCIRAG_PORT", help="TCP port"),
    local_role: str = typer.Option("scirag_reader", help="role of requests in local-only mode (no keys)"),
    pool_size: int = typer.Option(10, help="database connections in the pool"),
):
    """Serve REST (/v1, OpenAPI at /openapi.json), MCP (/mcp) and the web page (/) over HTTP."""
    import uvicorn

    from scirag.server.app import create_app

    _logging()
    target = dsn or db.default_dsn()
    n = _active_keys(target)
    if n == 0:
        if host not in LOOPBACK:
            raise typer.BadParameter(
                f"no API keys exist, so the server is local-only and binds the loopback; "
                f"refusing --host {host} (make a key with `scirag keys add` first)"
            )
        bar = "!" * 78
        print(
            f"{bar}\n!! LOCAL-ONLY MODE: no API keys are configured. Every request to "
            f"http://{host}:{port}\n!! acts as database role {local_role!r} WITHOUT authentication. "
            f"Bound to the loopback only.\n!! Make a key (scirag keys add NAME --role ROLE) to require keys.\n{bar}",
            file=sys.stderr,
            flush=True,
        )
    app = create_app(target, local_role=local_role if n == 0 else None, host=host, pool_size=pool_size)
    print(
        f"scirag serving on http://{host}:{port}/ (REST /v1, OpenAPI /openapi.json, MCP /mcp)",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        app, host=host, port=port, access_log=False, log_config=None, lifespan="on", timeout_graceful_shutdown=5
    )


def mcp(
    dsn: Optional[str] = DsnOption,
    role: str = typer.Option("scirag_reader", help="database role every tool call runs as"),
):
    """Run the MCP server over stdio (for agents); logs go to stderr."""
    import anyio

    from scirag.server.mcp_tools import build_mcp
    from scirag.server.service import Service

    _logging()
    # lazy pools and a short wait: with the database down the server still starts and
    # each tool call fails within seconds with a tool error saying so (issue 25)
    service = Service(dsn or db.default_dsn(), min_size=1, max_size=4, timeout=5.0, lazy=True)
    server = build_mcp(service, default_identity=Identity(name="stdio", role=role, byo_llm=False, rate_per_minute=None))

    async def main():
        await service.open()
        try:
            await server.run_stdio_async()
        finally:
            await service.close()

    anyio.run(main)


def keys_add(
    name: str = typer.Argument(..., help="label, unique"),
    role: str = typer.Option(..., "--role", help="database role requests with this key run as"),
    byo_llm: bool = typer.Option(False, "--byo-llm", help="may send its own model key (X-LLM-API-Key)"),
    rate: int = typer.Option(120, "--rate", help="requests per minute"),
    note: Optional[str] = typer.Option(None, help="what the key is for"),
    dsn: Optional[str] = DsnOption,
):
    """Make a key; it is printed once and stored only as a hash."""
    with psycopg.connect(dsn or db.default_dsn()) as conn:
        try:
            key = add_key(conn, name, role, byo_llm=byo_llm, rate_per_minute=rate, note=note)
        except (KeyError_, psycopg.Error) as exc:
            raise typer.BadParameter(str(exc).strip().splitlines()[0]) from None
    print(key)
    print(f"key {name!r} -> role {role}; shown once, stored as a SHA-256 hash", file=sys.stderr)


def keys_list(dsn: Optional[str] = DsnOption):
    """Keys with their role, rate, BYO flag and state (never the key)."""
    with psycopg.connect(dsn or db.default_dsn()) as conn:
        rows = list_keys(conn)
    for r in rows:
        state = f"revoked {r['revoked_at']:%Y-%m-%d %H:%M}" if r["revoked_at"] else "active"
        print(
            f"{r['name']:<20} {r['key_prefix']}…  role={r['role_name']}  rate={r['rate_per_minute']}/min"
            f"  byo_llm={'yes' if r['byo_llm'] else 'no'}  {state}" + (f"  # {r['note']}" if r["note"] else "")
        )
    if not rows:
        print("(no keys: `scirag serve` runs local-only)")


def keys_revoke(name: str = typer.Argument(...), dsn: Optional[str] = DsnOption):
    """Revoke a key (a running server refuses it within a few seconds)."""
    with psycopg.connect(dsn or db.default_dsn()) as conn:
        try:
            revoke_key(conn, name)
        except KeyError_ as exc:
            raise typer.BadParameter(str(exc)) from None
    print(f"revoked {name!r}", file=sys.stderr)
